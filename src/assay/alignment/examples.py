"""Labelled rows as worked examples, in the shape of the prompt each judge sends.

A builder takes the metric, a row's fields, its label (yes/no labels as 1/0) and the reviewer's
reason, and returns (prompt id, prompt inputs, answer) — or None when the row cannot make an honest
example. Metrics without a builder are aligned by threshold only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.errors import UsageError
from assay.metrics.aligned import TEMPLATE, as_binary
from assay.metrics.criteria import Criteria
from assay.metrics.custom.llm_metrics import NumericMetric, _TemplateMetric
from assay.metrics.general._inputs import judge_inputs
from assay.metrics.general.aspect_critic import AspectCritic
from assay.metrics.general.rubrics import (
    InstanceSpecificRubrics,
    RubricsScore,
    SimpleCriteriaScore,
    rubric_scores,
    rubric_text,
)
from assay.metrics.rag.claims import join_contexts
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.metrics.rag.faithfulness import Faithfulness

Built = tuple[str, dict[str, Any], Any] | None
Builder = Callable[[Any, dict[str, Any], Any, str | None], Built]

# An example's source text is shown in full (cutting it would change what it supports); rows
# with longer sources are left out of the pool so a few examples fit a small judge's window.
MAX_EXAMPLE_CHARS = 3000


def _binary(metric: Any, label: Any) -> int:
    value = as_binary(label)
    if value is None:
        raise UsageError(
            f"{type(metric).__name__} takes yes/no labels (1/0, pass/fail), got {label!r}"
        )
    return value


def _general_inputs(fields: dict[str, Any]) -> dict[str, Any]:
    return judge_inputs(
        fields.get("user_input"),
        fields.get("response"),
        fields.get("retrieved_contexts"),
        fields.get("reference"),
    )


def _supported_by_contexts(field: str) -> Builder:
    """Verdict examples for metrics that check one text against the contexts (faithfulness checks
    the response, context recall the reference). The reviewer judged the whole text, so the
    example checks it as one statement: yes when the label is yes, no otherwise (which sentence
    fails is not known)."""

    def build(metric: Any, fields: dict[str, Any], label: Any, reason: str | None) -> Built:
        source = join_contexts(fields.get("retrieved_contexts") or [])
        text = str(fields.get(field) or "").strip()
        if not source or not text or len(source) > MAX_EXAMPLE_CHARS:
            return None
        verdict = "yes" if _binary(metric, label) else "no"
        return "supported", {"source": source, "items": f"1. {text}"}, f"1. {verdict}"

    return build


def _aspect_critic(
    metric: AspectCritic, fields: dict[str, Any], label: Any, reason: str | None
) -> Built:
    inputs = {"criterion": metric.definition, **_general_inputs(fields)}
    return "aspect_critic", inputs, "yes" if _binary(metric, label) else "no"


def _rubric_answer(metric: Any, rubric: dict[str, str], label: Any, reason: str | None) -> Any:
    scores = rubric_scores(rubric)
    try:
        score = int(label)
    except (TypeError, ValueError):
        score = None
    if score not in scores or float(label) != score:
        raise UsageError(
            f"{type(metric).__name__}: label {label!r} is not one of the rubric's scores {scores}"
        )
    return {"feedback": reason or f"This matches score {score} of the rubric.", "score": score}


def _rubrics(metric: RubricsScore, fields: dict[str, Any], label: Any, reason: str | None) -> Built:
    rubric = metric.rubrics or {}
    inputs = {"rubric": rubric_text(rubric), **_general_inputs(fields)}
    return "rubric_score", inputs, _rubric_answer(metric, rubric, label, reason)


def _instance_rubrics(
    metric: InstanceSpecificRubrics, fields: dict[str, Any], label: Any, reason: str | None
) -> Built:
    rubric = fields.get("rubrics") or {}
    if not rubric:
        return None
    inputs = {"rubric": rubric_text(rubric), **_general_inputs(fields)}
    return "rubric_score", inputs, _rubric_answer(metric, rubric, label, reason)


def _simple_criteria(
    metric: SimpleCriteriaScore, fields: dict[str, Any], label: Any, reason: str | None
) -> Built:
    low, high = metric.score_range
    if isinstance(label, bool) or not isinstance(label, (int, float)) or not low <= label <= high:
        raise UsageError(
            f"{metric.name}: label {label!r} is outside the score range {metric.score_range}"
        )
    inputs = {"criterion": metric.definition, **_general_inputs(fields)}
    return (
        "simple_criteria",
        inputs,
        {"reason": reason or "This is the score it deserves.", "score": label},
    )


def _criteria(metric: Criteria, fields: dict[str, Any], label: Any, reason: str | None) -> Built:
    if metric.criteria_type != "llm_judge":
        return None
    subject = metric._subject(fields)
    inputs = judge_inputs(
        fields.get("user_input"),
        subject,
        None if metric.phase == "retrieval" else fields.get("retrieved_contexts"),
        fields.get("reference"),
    )
    if metric.output_type == "bool":
        criterion = (
            f"{metric.header}\nyes means: {metric.bool_true or 'yes'}\n"
            f"no means: {metric.bool_false or 'no'}"
        )
        return (
            "aspect_critic",
            {"criterion": criterion, **inputs},
            "yes" if _binary(metric, label) else "no",
        )
    if metric.output_type == "5-point":
        labels = [getattr(metric, f"likert_score_{i}") for i in range(1, 6)]
        rubric = {f"score{i}_description": text for i, text in enumerate(labels, start=1)}
        values = {"rubric": f"{metric.header}\n{rubric_text(rubric)}", **inputs}
        return "rubric_score", values, _rubric_answer(metric, rubric, label, reason)
    criterion = f"{metric.description}\n{metric.prompt}".strip()
    return (
        "simple_criteria",
        {"criterion": criterion, **inputs},
        {"reason": reason or "", "score": label},
    )


def _template(
    metric: _TemplateMetric, fields: dict[str, Any], label: Any, reason: str | None
) -> Built:
    inputs = {name: fields.get(name, "") for name in metric.get_variables()}
    return TEMPLATE, inputs, {"reason": reason or "", "value": label}


BUILDERS: dict[type, Builder] = {
    Faithfulness: _supported_by_contexts("response"),
    LLMContextRecall: _supported_by_contexts("reference"),
    AspectCritic: _aspect_critic,
    InstanceSpecificRubrics: _instance_rubrics,
    RubricsScore: _rubrics,
    SimpleCriteriaScore: _simple_criteria,
    Criteria: _criteria,
    _TemplateMetric: _template,
}


def scale_label(metric: Any, fields: dict[str, Any], label: int) -> Any:
    """A yes/no label in the scale a metric answers on: yes is the top of the scale, no the
    bottom (a rubric's label 1 is its worst score, not a yes). Metrics answering yes/no keep it."""
    if isinstance(metric, (RubricsScore, InstanceSpecificRubrics)):
        rubric = metric.rubrics if isinstance(metric, RubricsScore) else fields.get("rubrics")
        scores = rubric_scores(rubric or {}) if rubric else []
        return (scores[-1] if label else scores[0]) if scores else label
    if isinstance(metric, SimpleCriteriaScore):
        return metric.score_range[1] if label else metric.score_range[0]
    if isinstance(metric, Criteria) and metric.output_type == "5-point":
        return 5 if label else 1
    if isinstance(metric, Criteria) and metric.output_type == "prompt":
        raise UsageError(f"criteria {metric.name!r} has no known scale to put yes/no labels on")
    if isinstance(metric, NumericMetric):
        return metric.allowed_values[1] if label else metric.allowed_values[0]
    return label


def example_for(
    metric: Any, fields: dict[str, Any], label: Any, reason: str | None, kind: str
) -> Built:
    """The worked example a labelled row makes for this metric, or None (no builder, or the row
    cannot make an honest one)."""
    build = builder_for(metric)
    if build is None:
        return None
    if kind == "binary":
        label = scale_label(metric, fields, label)
    return build(metric, fields, label, reason)


def builder_for(metric: Any) -> Builder | None:
    """The example builder of the metric's class or its nearest base that has one."""
    for cls in type(metric).__mro__:
        if cls in BUILDERS:
            return BUILDERS[cls]
    return None


__all__ = ["BUILDERS", "MAX_EXAMPLE_CHARS", "builder_for", "example_for", "scale_label"]
