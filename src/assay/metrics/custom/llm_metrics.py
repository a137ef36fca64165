"""`DiscreteMetric`, `NumericMetric`, `RankingMetric`: LLM judges defined by a prompt template.

    DiscreteMetric(name="correctness", allowed_values=["pass", "fail"],
                   prompt="Does the response cover the grading notes? {response} {grading_notes}")
    metric.score(llm=judge, response=..., grading_notes=...)  ->  MetricResult("pass", reason)

Placeholders are the metric's required fields (in `evaluate()` they may also be extra columns of
the dataset). The llm can be given at construction, at call time, or by `evaluate()`; without one, the configured
default judge is used (ASSAY_LLM, else the embedded offline judge).
Metrics save to and load from JSON (`save(path)`, `Cls.load(path)`).
"""

from __future__ import annotations

import abc
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from assay.errors import UsageError
from assay.metrics.aligned import Alignable, AlignedState
from assay.metrics.base import CallEstimate, Metric, default_model
from assay.metrics.custom.agreement import correlation
from assay.metrics.custom.template import placeholders, render_template
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample

FORMAT_VERSION = "1.0"


@dataclass(kw_only=True)
class _TemplateMetric(Alignable, Metric):
    prompt: str = ""
    llm: Any = None
    examples: list[dict[str, Any]] = field(default_factory=list)

    needs_llm: ClassVar[bool] = True
    if TYPE_CHECKING:  # each kind declares its own: labels, a numeric range, a ranking's length
        allowed_values: Any
    metric_type: ClassVar[str] = ""
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.prompt or not placeholders(self.prompt):
            raise UsageError(
                f"{type(self).__name__} {self.name!r} needs a prompt with {{placeholders}} for its inputs"
            )
        self._validate_allowed()
        # Instance-level: which fields this judge reads is decided by its template.
        self.declare_fields(placeholders(self.prompt))

    def _validate_allowed(self) -> None:
        """Subclasses check their `allowed_values`."""

    @abc.abstractmethod
    def answer_model(self) -> type[BaseModel]:
        """The JSON shape of the judge's answer, with `value` constrained to the allowed values."""

    def answer_model_for(self, fields: dict[str, Any]) -> type[BaseModel]:
        """The answer's shape for these inputs (a ranking may only hold items it was given)."""
        return self.answer_model()

    async def ascore(self, llm: Any = None, **fields: Any) -> MetricResult:
        missing = [name for name in self.required_fields if fields.get(name) is None]
        if missing:
            raise UsageError(
                f"metric {self.name!r} needs {', '.join(missing)} (its prompt uses them)"
            )
        # Without a model here or on the metric: the configured default, as evaluate() does.
        judge = llm or self.llm or default_model("llm")
        aligned = self.alignment  # fitted by align(): see metrics/aligned.py
        scorer = await aligned.prepare(self, fields) if aligned is not None else self
        response = await judge.agenerate(
            render_template(scorer.prompt, fields, scorer.examples),
            schema=self.answer_model_for(fields),
        )
        answer = response.parsed
        result = MetricResult(self._value(answer.value), reason=answer.reason)
        return aligned.annotate(result) if aligned is not None else result

    def score(self, llm: Any = None, **fields: Any) -> MetricResult:
        from assay._util.sync import run_sync

        return run_sync(self.ascore(llm=llm, **fields))

    async def _ascore(
        self, **fields: Any
    ) -> MetricResult:  # pragma: no cover - ascore is overridden
        return await self.ascore(**fields)

    def _value(self, value: Any) -> Any:
        return value

    def get_variables(self) -> list[str]:
        """The prompt's placeholders: the fields this judge reads."""
        return placeholders(self.prompt)

    def get_correlation(self, gold_labels: list[Any], predictions: list[Any]) -> float:
        """Agreement of this judge's values with gold values (see `assay.metrics.custom.agreement`)."""
        return correlation(self.kind, gold_labels, predictions)

    def estimate(self, sample: Sample) -> CallEstimate:
        text = sum(len(str(sample.get(name) or "")) for name in self.required_fields) + len(
            self.prompt
        )
        return CallEstimate(requests=1, input_tokens=150 + text // 4, output_tokens=60)

    # -- persistence -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "metric_type": self.metric_type,
            "name": self.name,
            "prompt": self.prompt,
            "allowed_values": self._allowed_json(),
            "examples": self.examples,
            "version": self.version,
            **({"alignment": self.alignment.to_json()} if self.alignment else {}),
        }

    def _allowed_json(self) -> Any:
        return self.allowed_values

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path is not None else Path(f"{self.name}.json")
        if target.is_dir():
            target = target / f"{self.name}.json"
        elif not target.suffix:
            target = target.with_suffix(".json")
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False)
        try:
            if target.suffix == ".gz":
                target.write_bytes(gzip.compress(text.encode("utf-8")))
            else:
                target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot save metric to {target}: {exc}") from exc
        return target

    @classmethod
    def load(
        cls, path: str | Path, llm: Any = None, embedding_model: Any = None
    ) -> _TemplateMetric:
        source = Path(path)
        try:
            raw = (
                gzip.decompress(source.read_bytes()).decode("utf-8")
                if source.suffix == ".gz"
                else source.read_text("utf-8")
            )
            data = json.loads(raw)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load metric from {source}: {exc}") from exc
        if data.get("metric_type") != cls.metric_type:
            raise UsageError(f"{source} holds a {data.get('metric_type')}, not a {cls.metric_type}")
        allowed = data["allowed_values"]
        if cls is NumericMetric:
            allowed = tuple(allowed)
        metric = cls(
            name=data["name"],
            prompt=data["prompt"],
            allowed_values=allowed,
            llm=llm,
            examples=data.get("examples", []),
        )
        if data.get("alignment"):
            state = AlignedState.from_json(data["alignment"], str(source))
            state.embeddings = embedding_model
            metric.set_alignment(state, source=str(source))
        return metric


@dataclass(kw_only=True)
class DiscreteMetric(_TemplateMetric):
    """The judge picks one label from `allowed_values`."""

    allowed_values: list[str] = field(default_factory=lambda: ["pass", "fail"])
    metric_type: ClassVar[str] = "DiscreteMetric"
    kind: ClassVar[str] = "discrete"

    def _validate_allowed(self) -> None:
        if not self.allowed_values or len(set(map(str, self.allowed_values))) != len(
            self.allowed_values
        ):
            raise UsageError("allowed_values must be a non-empty list of distinct labels")

    def answer_model(self) -> type[BaseModel]:
        # Accept each label as given and as text: a judge may write 7 or "7" for an integer scale.
        labels = tuple(
            dict.fromkeys([*self.allowed_values, *(str(value) for value in self.allowed_values)])
        )
        value: Any = (Literal[labels], ...)  # a Literal of the allowed values, made at run time
        return create_model("DiscreteAnswer", reason=(str, ...), value=value)

    def _value(self, value: Any) -> Any:
        # Give back the caller's own type (e.g. ints 0..10 listed as allowed values).
        for allowed in self.allowed_values:
            if str(allowed) == str(value):
                return allowed
        return value


@dataclass(kw_only=True)
class NumericMetric(_TemplateMetric):
    """The judge gives a number within `allowed_values = (low, high)`."""

    allowed_values: tuple[float, float] = (0.0, 1.0)
    metric_type: ClassVar[str] = "NumericMetric"
    kind: ClassVar[str] = "numeric"

    def _validate_allowed(self) -> None:
        if isinstance(self.allowed_values, range):
            self.allowed_values = (self.allowed_values.start, self.allowed_values.stop - 1)
        low, high = self.allowed_values
        if low >= high:
            raise UsageError(
                f"allowed_values must be (low, high) with low < high, got {self.allowed_values}"
            )

    def answer_model(self) -> type[BaseModel]:
        low, high = self.allowed_values
        return create_model(
            "NumericAnswer", reason=(str, ...), value=(float, Field(..., ge=low, le=high))
        )

    def _allowed_json(self) -> Any:
        return list(self.allowed_values)


@dataclass(kw_only=True)
class RankingMetric(_TemplateMetric):
    """The judge returns an ordered list of `allowed_values` items (best first).

    Each ranked item must be one of the inputs: an element of a list given to a placeholder
    (the schema then lists them as the only choices), or text that occurs in a text input
    (`results="result1, result2, result3"`). An item never given, or one ranked twice, gets the
    model layer's repair turn and then a typed error."""

    allowed_values: int = 2
    metric_type: ClassVar[str] = "RankingMetric"
    kind: ClassVar[str] = "ranking"

    def _validate_allowed(self) -> None:
        if not isinstance(self.allowed_values, int) or self.allowed_values < 1:
            raise UsageError(
                "allowed_values of a RankingMetric is the length of the ranking, a positive integer"
            )

    def answer_model(self) -> type[BaseModel]:
        n = self.allowed_values
        return create_model(
            "RankingAnswer",
            reason=(str, ...),
            value=(list[str], Field(..., min_length=n, max_length=n)),
        )

    def answer_model_for(self, fields: dict[str, Any]) -> type[BaseModel]:
        n = self.allowed_values
        given = [value for value in fields.values() if value is not None]
        listed = list(
            dict.fromkeys(
                str(item) for value in given if isinstance(value, (list, tuple)) for item in value
            )
        )
        texts = [str(value) for value in given if not isinstance(value, (list, tuple))]
        item_type: Any = Literal[tuple(listed)] if listed and not texts else str

        def among_inputs(cls: Any, ranking: list[str]) -> list[str]:
            for item in ranking:
                if str(item) not in listed and not any(
                    str(item).strip() and str(item).strip() in text for text in texts
                ):
                    raise ValueError(f"{item!r} is not one of the items given to rank")
            if len(set(map(str, ranking))) != len(ranking):
                raise ValueError("an item is ranked more than once")
            return ranking

        return create_model(
            "RankingAnswer",
            reason=(str, ...),
            value=(list[item_type], Field(..., min_length=n, max_length=n)),
            __validators__={"among_inputs": field_validator("value")(among_inputs)},
        )


NumericalMetric = NumericMetric  # the name Ragas' quickstart templates use

__all__ = ["DiscreteMetric", "NumericMetric", "NumericalMetric", "RankingMetric"]
