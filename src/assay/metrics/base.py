"""The one metric base class.

A metric is a dataclass whose fields are its parameters (`RougeScore(rouge_type="rouge1")`).
It declares which sample fields it needs, and implements one coroutine, `_ascore(**fields)`,
returning a `MetricResult`. Callers use:

- `await metric.ascore(**fields)` / `metric.score(**fields)`: score loose values directly;
- `await metric.ascore_sample(sample)`: score a `SingleTurnSample`/`MultiTurnSample`.

A metric raises `NotApplicable` when a sample is outside its domain; the engine records that
as a `skipped` outcome. Any other exception becomes an `error` outcome in a run.
Metrics never know which model provider runs them: models arrive as the `llm`/`embeddings`
fields of the metrics that declare them.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import os
import threading
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import anyio

from assay._util.sync import run_sync
from assay.errors import UsageError, first_leaf
from assay.metrics.declared import check_literal_parameters, settle_fields
from assay.schema.outcome import MetricResult
from assay.schema.samples import MultiTurnSample, Sample, SingleTurnSample

SampleKind = Literal["single_turn", "multi_turn"]


def kind_of(sample: Sample) -> SampleKind:
    return "multi_turn" if isinstance(sample, MultiTurnSample) else "single_turn"


def single_turn(sample: Sample) -> SingleTurnSample:
    """`sample` as the single-turn sample a single-turn metric is given: the engine hands a metric
    (`estimate`, `ascore_sample`) only samples it `accepts`."""
    if not isinstance(sample, SingleTurnSample):
        raise TypeError(f"a single-turn metric was given a {type(sample).__name__}")
    return sample


def multi_turn(sample: Sample) -> MultiTurnSample:
    """`sample` as the conversation a multi-turn metric is given (see `single_turn`)."""
    if not isinstance(sample, MultiTurnSample):
        raise TypeError(f"a multi-turn metric was given a {type(sample).__name__}")
    return sample


def model_identity(model: Any) -> Any:
    """How results name a judge or embedding model: its `identity()`, else its repr."""
    identity = getattr(model, "identity", None)
    return identity() if callable(identity) else repr(model)


@dataclass(frozen=True)
class CallEstimate:
    """Expected model use for one cell: requests and tokens (rough: ~4 characters a token)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    embedding_tokens: int = 0

    def __add__(self, other: CallEstimate) -> CallEstimate:
        return CallEstimate(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.embedding_tokens + other.embedding_tokens,
        )


# Fields that hold models or other live objects, not configuration.
_RUNTIME_FIELDS = frozenset({"llm", "embeddings"})


@dataclass(kw_only=True)
class Metric(abc.ABC):
    """Base class of every metric. Subclasses are `@dataclass(kw_only=True)` too."""

    name: str = ""

    required_fields: ClassVar[tuple[str, ...]] = ()
    optional_fields: ClassVar[tuple[str, ...]] = ()
    sample_kind: ClassVar[SampleKind] = "single_turn"
    # The kinds of sample it scores; `(sample_kind,)` unless a metric scores both (general judges).
    sample_kinds: ClassVar[tuple[SampleKind, ...]] = ("single_turn",)
    needs_llm: ClassVar[bool] = False
    needs_embeddings: ClassVar[bool] = False
    version: ClassVar[str] = "1"
    # Required fields for which an empty value is meaningful (e.g. "expect no tool call").
    empty_allowed: ClassVar[tuple[str, ...]] = ()
    # "higher" for most scores; "lower" for error-like metrics such as noise sensitivity.
    better: ClassVar[Literal["higher", "lower"]] = "higher"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "sample_kind" in cls.__dict__ and "sample_kinds" not in cls.__dict__:
            cls.sample_kinds = (cls.sample_kind,)
        settle_fields(cls)  # required/optional fields from the signature of `_ascore`

    def __post_init__(self) -> None:
        if not self.name:
            raise UsageError(f"{type(self).__name__} needs a non-empty name")
        check_literal_parameters(self)

    def declare_fields(self, required: Any, optional: Any = None) -> None:
        """Set the sample fields this instance reads, in place of its class's: for metrics whose
        inputs follow from their configuration (a prompt's placeholders, a rubric with or
        without a reference). They are instance attributes, not dataclass fields, because they
        are derived from the configuration and not part of it. `optional` None keeps the
        class's."""
        self.required_fields = tuple(required)  # type: ignore[misc]  # shadows the class's, on purpose
        if optional is not None:
            self.optional_fields = tuple(optional)  # type: ignore[misc]  # as above

    def fields_for(self, kind: SampleKind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(required, optional) fields when scoring a sample of `kind`. Metrics that score both
        kinds override this for the kind that is not their `sample_kind`."""
        return self.required_fields, self.optional_fields

    def _kind_of(self, fields: dict[str, Any]) -> SampleKind:
        """Which kind of sample loose fields describe: a conversation has a list as user_input."""
        if len(self.sample_kinds) > 1:
            return "multi_turn" if isinstance(fields.get("user_input"), list) else "single_turn"
        return self.sample_kinds[0]

    # -- the part a subclass writes ----------------------------------------------------
    @abc.abstractmethod
    async def _ascore(self, *args: Any, **fields: Any) -> MetricResult:
        """Compute the score from the sample fields this metric declared. A subclass names the
        fields it reads as keyword parameters (`*, response: str, reference: str`); they are
        always passed by name. (`*args` makes any such signature a valid override for mypy.)"""

    # -- calling a metric --------------------------------------------------------------
    async def ascore(self, **fields: Any) -> MetricResult:
        """Score one sample given as keyword arguments named like sample fields."""
        required, optional = self.fields_for(self._kind_of(fields))
        missing = [field for field in required if fields.get(field) is None]
        if missing:
            raise UsageError(
                f"{type(self).__name__}.score() needs {', '.join(missing)} "
                f"(required: {', '.join(required)})"
            )
        known = set(required) | set(optional)
        unknown = sorted(set(fields) - known)
        if unknown:
            raise UsageError(
                f"{type(self).__name__}.score() got unexpected field(s) {', '.join(unknown)}; "
                f"it takes {', '.join(sorted(known))}"
            )
        scorer = self._with_default_models()
        aligned = getattr(scorer, "_aligned", None)  # fitted by align(): see metrics/aligned.py
        try:
            if aligned is not None:
                scorer = await aligned.prepare(scorer, fields)
            result = await scorer._ascore(**fields)
        except Exception as exc:
            # Concurrent judge calls fail as an exception group; report the underlying error.
            leaf = first_leaf(exc)
            if leaf is exc:
                raise
            raise leaf from exc
        if not isinstance(result, MetricResult):
            result = MetricResult(result)
        return aligned.annotate(result) if aligned is not None else result

    def score(self, **fields: Any) -> MetricResult:
        """Synchronous twin of `ascore`; safe inside a running event loop."""
        return run_sync(self.ascore(**fields))

    def batch_score(self, inputs: list[dict[str, Any]]) -> list[MetricResult]:
        """`score(**fields)` for each dict of fields, in order."""
        return [self.score(**fields) for fields in _batch(inputs)]

    async def abatch_score(self, inputs: list[dict[str, Any]]) -> list[MetricResult]:
        """`ascore(**fields)` for each dict of fields, concurrently; results in input order."""
        batch = _batch(inputs)
        results: list[Any] = [None] * len(batch)

        async def one(index: int) -> None:
            results[index] = await self.ascore(**batch[index])

        try:
            async with anyio.create_task_group() as group:
                for index in range(len(batch)):
                    group.start_soon(one, index)
        except Exception as exc:
            leaf = first_leaf(exc)
            if leaf is exc:
                raise
            raise leaf from exc
        return results

    def missing_fields(self, sample: Sample) -> list[str]:
        """Required fields the sample lacks (None or empty)."""
        return [
            field
            for field in self.fields_for(kind_of(sample))[0]
            if (sample.get(field) is None if field in self.empty_allowed else not sample.has(field))
        ]

    def accepts(self, sample: Sample) -> bool:
        return kind_of(sample) in self.sample_kinds

    async def ascore_sample(self, sample: Sample) -> MetricResult:
        required, optional = self.fields_for(kind_of(sample))
        fields = {
            field: sample.get(field)
            for field in (*required, *optional)
            if sample.get(field) is not None
        }
        return await self.ascore(**fields)

    def estimate(self, sample: Sample) -> CallEstimate:
        """Model calls and tokens this metric expects to spend on `sample`, before spending them.
        Metrics that call models override this; the default is no calls."""
        return CallEstimate()

    # -- description -------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        """Configuration fields (models excluded), JSON-friendly."""
        return {
            field.name: _plain(getattr(self, field.name))
            for field in dataclasses.fields(self)
            if field.name not in _RUNTIME_FIELDS and field.name != "name"
        }

    def spec(self) -> dict[str, Any]:
        """Identity of this metric configuration, stored with results and checkpoints."""
        spec = {
            "name": self.name,
            "class": type(self).__name__,
            "version": self.version,
            "params": self.params(),
        }
        for field in sorted(_RUNTIME_FIELDS):
            model = getattr(self, field, None)
            if model is not None:
                spec[field] = model_identity(model)
        return spec

    def _with_default_models(self) -> Metric:
        """Scored on its own without a model, a metric uses the configured default (ASSAY_LLM /
        ASSAY_EMBEDDINGS, else the embedded offline models), built at the first score and shared.
        The metric itself stays unbound: a later `evaluate(llm=...)` still gives it the run's model."""
        wants_llm = self.needs_llm and getattr(self, "llm", None) is None
        wants_embeddings = self.needs_embeddings and getattr(self, "embeddings", None) is None
        if not (wants_llm or wants_embeddings):
            return self
        return self.with_models(
            llm=default_model("llm") if wants_llm else None,
            embeddings=default_model("embeddings", getattr(self, "language", None))
            if wants_embeddings
            else None,
        )

    def with_models(self, *, llm: Any = None, embeddings: Any = None) -> Metric:
        """A copy with missing models filled in; the original is left untouched."""
        changes = {}
        if llm is not None and self.needs_llm and getattr(self, "llm", None) is None:
            changes["llm"] = llm
        if (
            embeddings is not None
            and self.needs_embeddings
            and getattr(self, "embeddings", None) is None
        ):
            changes["embeddings"] = embeddings
        if not changes:
            return self
        copy = dataclasses.replace(self, **changes)
        # Private state that is not a field (e.g. edited prompts) travels with the copy.
        copy.__dict__.update({k: v for k, v in self.__dict__.items() if k.startswith("_")})
        return copy


_defaults: dict[tuple[str, str | None, str | None], Any] = {}
_defaults_lock = threading.Lock()


def default_model(kind: Literal["llm", "embeddings"], language: str | None = None) -> Any:
    """The default judge or embedding model, built once per configuration and process."""
    from assay.models import defaults

    variable = "ASSAY_LLM" if kind == "llm" else "ASSAY_EMBEDDINGS"
    key = (kind, os.environ.get(variable), language if kind == "embeddings" else None)
    with _defaults_lock:
        if key not in _defaults:
            _defaults[key] = (
                defaults.default_llm() if kind == "llm" else defaults.default_embeddings(language)
            )
        return _defaults[key]


def forget_default_models() -> None:
    """Drop the cached defaults (for tests that change the configuration)."""
    with _defaults_lock:
        _defaults.clear()


def _batch(inputs: Any) -> list[dict[str, Any]]:
    if not isinstance(inputs, (list, tuple)):
        raise UsageError(f"inputs must be a list of dicts of fields, got {type(inputs).__name__}")
    for position, item in enumerate(inputs):
        if not isinstance(item, dict):
            raise UsageError(
                f"inputs[{position}] must be a dict of fields, got {type(item).__name__}"
            )
    return list(inputs)


def _plain(value: Any) -> Any:
    """A JSON-friendly form of a parameter: nested metrics by their spec, enums by value."""
    if isinstance(value, Metric):
        return value.spec()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


__all__ = [
    "CallEstimate",
    "Metric",
    "SampleKind",
    "default_model",
    "forget_default_models",
    "kind_of",
    "multi_turn",
    "single_turn",
]
