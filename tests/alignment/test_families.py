"""`align_and_validate` on every family of LLM judge, through the real metric and model path.

One scripted judge serves them all: it reads the row it is asked about (the last message; worked
examples come before it) for a `grade=K` marker and answers K in the form the request asks for
(the JSON schema's number fields, a ranking, or yes/no text). Rows marked `off` get the wrong
answer, so each report's statistics are known by hand. The checks: each family's examples take
its prompt's shape, a scored row is shown examples of both labels, and the held-out report has
the family's statistics with the values the marks imply.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from assay.alignment import LabeledSet, from_rows
from assay.alignment.scoring import metric_fields
from assay.metrics.criteria import Criteria
from assay.metrics.custom.llm_metrics import DiscreteMetric, NumericMetric, RankingMetric
from assay.metrics.general.aspect_critic import AspectCritic
from assay.metrics.general.rubrics import InstanceSpecificRubrics, RubricsScore, SimpleCriteriaScore
from assay.metrics.rag.context_precision import LLMContextPrecisionWithReference
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.models import LLM, ScriptedProvider
from tests.alignment.scripted import keyword_embedder

RANKS = {0: ["alpha", "beta", "gamma"], 1: ["gamma", "beta", "alpha"]}


def _fill(schema: dict, defs: dict, grade: float) -> object:
    if "$ref" in schema:
        return _fill(defs[schema["$ref"].split("/")[-1]], defs, grade)
    if "enum" in schema:
        wanted = [v for v in schema["enum"] if str(v) == str(grade)]
        return wanted[0] if wanted else schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return _fill(schema[key][0], defs, grade)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: _fill(v, defs, grade) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return RANKS[int(grade)]
    if kind == "integer":
        return int(grade)
    if kind == "number":
        return float(grade)
    if kind == "boolean":
        return bool(grade)
    return "because of the grade"


def answer(request) -> str:
    row = str(request.messages[-1].content)
    marks = re.findall(r"grade=(\d+)( off)?", row)
    grade, off = (int(marks[-1][0]), bool(marks[-1][1])) if marks else (0, False)
    if off:
        grade = {0: 1, 1: 0}.get(grade, grade - 1)
    if request.output is not None:
        schema = request.output.schema
        return json.dumps(_fill(schema, schema.get("$defs", {}), grade))
    if re.search(r"^1\. ", row, re.M):  # a numbered verdict list
        items = re.findall(r"^(\d+)\. ", row, re.M)
        return "\n".join(f"{n}. {'yes' if grade else 'no'}" for n in items)
    return "yes" if grade else "no"


def judge():
    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


CITIES = ["paris", "rome", "berlin", "madrid"]


def labelled(grades: list, *, off: set[int] = frozenset(), rubric: bool = False):
    """Rows whose response carries its grade marker; `off` rows are answered wrongly."""
    rows = []
    for i, grade in enumerate(grades):
        mark = "grade=" + str(grade if not isinstance(grade, list) else int(grade == RANKS[1]))
        row = {
            "id": f"r{i}",
            "user_input": f"Where is meeting {i}?",
            # the items a ranking judge ranks are in the text: it may rank only what it is given
            "response": f"It is in {CITIES[i % 4]} (alpha beta gamma), {mark}{' off' if i in off else ''}.",
            "retrieved_contexts": [f"Meeting {i} is in {CITIES[i % 4]}."],
            "reference": f"In {CITIES[i % 4]}, {mark}{' off' if i in off else ''}.",
            "label": grade,
            "group": f"g{i}",
        }
        if rubric:
            row["rubrics"] = {f"score{k}_description": f"level {k}" for k in range(1, 6)}
        rows.append(row)
    return from_rows(rows, group_column="group")


def held_out(rows):
    """The same rows under ids and groups of their own (a test split shares none with train)."""
    return LabeledSet([replace(e, id="t" + e.id, group="t" + e.group) for e in rows], "test")


BINARY = [i % 2 for i in range(12)]
FIVE = [1 + i % 5 for i in range(10)]

FAMILIES = {
    # name: (metric, train grades, test grades, test rows answered wrongly, kind, prompt id)
    "DiscreteMetric": (
        lambda llm: DiscreteMetric(
            name="d", prompt="Grade {response}", allowed_values=["0", "1"], llm=llm
        ),
        [str(g) for g in BINARY],
        ["0", "1", "0", "1"],
        {1},
        "nominal",
        "template",
    ),
    "NumericMetric": (
        lambda llm: NumericMetric(
            name="n", prompt="Grade {response}", allowed_values=(0.0, 5.0), llm=llm
        ),
        FIVE,
        [1, 2, 3, 4, 5],
        {4},
        "ordinal",
        "template",
    ),
    "RankingMetric": (
        lambda llm: RankingMetric(
            name="r", prompt="Rank {response} against {reference}", allowed_values=3, llm=llm
        ),
        [RANKS[i % 2] for i in range(12)],
        [RANKS[0], RANKS[1], RANKS[0], RANKS[1]],
        {1},
        "ranking",
        "template",
    ),
    "AspectCritic": (
        lambda llm: AspectCritic(name="a", definition="Is it right?", llm=llm),
        BINARY,
        [0, 1, 0, 1],
        {1},
        "binary",
        "aspect_critic",
    ),
    "RubricsScore": (
        lambda llm: RubricsScore(llm=llm),
        FIVE,
        [1, 2, 3, 4, 5],
        {4},
        "ordinal",
        "rubric_score",
    ),
    "InstanceSpecificRubrics": (
        lambda llm: InstanceSpecificRubrics(llm=llm),
        FIVE,
        [1, 2, 3, 4, 5],
        {4},
        "ordinal",
        "rubric_score",
    ),
    "SimpleCriteriaScore": (
        lambda llm: SimpleCriteriaScore(name="s", definition="Grade it 0-5", llm=llm),
        [i % 6 for i in range(12)],
        [1, 2, 3, 4, 5],
        {4},
        "ordinal",
        "simple_criteria",
    ),
    "Criteria bool": (
        lambda llm: Criteria(name="cb", header="Is it right?", output_type="bool", llm=llm),
        BINARY,
        [0, 1, 0, 1],
        {1},
        "binary",
        "aspect_critic",
    ),
    "Criteria 5-point": (
        lambda llm: Criteria(name="c5", header="How right?", output_type="5-point", llm=llm),
        FIVE,
        [1, 2, 3, 4, 5],
        {4},
        "ordinal",
        "rubric_score",
    ),
    "LLMContextRecall": (
        lambda llm: LLMContextRecall(llm=llm),
        BINARY,
        [0, 1, 0, 1],
        {1},
        "binary",
        "supported",
    ),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_align_and_validate_on_every_judge_family(family):
    make, train_grades, test_grades, off, kind, prompt_id = FAMILIES[family]
    llm, provider = judge()
    embeddings, _ = keyword_embedder()
    metric = make(llm)
    rubric = family == "InstanceSpecificRubrics"
    train = labelled(train_grades, rubric=rubric)
    test = held_out(labelled(test_grades, off=off, rubric=rubric))
    report = metric.align_and_validate(
        train,
        test,
        embedding_model=embeddings,
        max_similar_examples=2,
        show_progress=False,
        report_options={"n_resamples": 50},
    )
    state = metric.alignment
    assert report.kind == kind and report.n_scored == len(test) and report.failures == {}
    assert len(state.examples) == len(train)
    assert {e.prompt_id for e in state.examples} == {prompt_id}
    assert state.prompts and all("hash" in p and "version" in p for p in state.prompts.values())
    # agreement is known by hand: every row right except the `off` ones
    assert report.value("agreement") == pytest.approx(1 - len(off) / len(test))
    if kind == "binary":
        assert report.value("balanced_accuracy") == pytest.approx(0.75)
        assert report.confusion["matrix"] == [[2, 0], [1, 1]]
    if kind == "ordinal":
        assert report.value("mae") == pytest.approx(1 / 5)  # one row off by one
    if kind == "ranking":
        # the wrong row is ranked in reverse: tau 1, 1, 1 and -1
        assert report.value("kendall") == pytest.approx(0.5)
    # a scored row is shown two examples, of two different labels
    provider.requests.clear()
    row = labelled(test_grades[:1], rubric=rubric)[0]
    metric.score(**metric_fields(metric, row.fields))
    [request] = provider.requests
    shown = [
        re.findall(r"grade=(\d+)", str(m.content))
        for m in request.messages[1:-1]
        if m.role == "user" and "grade=" in str(m.content)
    ]
    assert len(shown) == 2 and len({tuple(s) for s in shown}) == 2


def test_a_verdict_metric_without_examples_is_aligned_by_its_threshold():
    llm, _ = judge()
    embeddings, _ = keyword_embedder()
    metric = LLMContextPrecisionWithReference(llm=llm)
    train = labelled(BINARY)
    report = metric.align_and_validate(
        train,
        held_out(labelled([0, 1, 0, 1])),
        embedding_model=embeddings,
        show_progress=False,
        report_options={"n_resamples": 50},
    )
    state = metric.alignment
    assert state.examples == [] and state.threshold is not None
    assert any("threshold only" in note for note in state.provenance["notes"])
    assert report.value("agreement") == pytest.approx(1.0)


def test_labels_that_run_against_the_scores_are_pointed_out():
    from assay.metrics.rag.faithfulness import Faithfulness

    llm, _ = judge()
    embeddings, _ = keyword_embedder()
    plain = Faithfulness(llm=llm).align(labelled(BINARY), embeddings, show_progress=False)
    assert plain.alignment.provenance["train_roc_auc"] == pytest.approx(1.0)
    assert not any("run against" in n for n in plain.alignment.provenance["notes"])
    # label 1 given to the rows the judge calls unsupported: every cut is wrong
    flipped = Faithfulness(llm=llm).align(
        labelled(BINARY), embeddings, show_progress=False, mapping={0: 1, 1: 0}
    )
    assert flipped.alignment.provenance["train_roc_auc"] == pytest.approx(0.0)
    assert any(
        "run against the labels" in n and "check what label 1 means" in n
        for n in flipped.alignment.provenance["notes"]
    )
