"""Scoring labelled rows with a judge under a call budget, with a progress bar.

Every judge call made while aligning, optimizing or validating goes through `Counted`, which
spends one unit of a `CallBudget` per call and refuses the call once the budget is spent
(`BudgetExhausted`, before anything is sent). A row whose score fails is kept as a typed failure
(error type and message), never a silent NaN; the statistics say how many rows they cover.
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay.alignment.labels import LabeledExample
from assay.errors import BudgetExhausted, UsageError
from assay.metrics.aligned import as_binary, decision_score, excluding
from assay.metrics.base import default_model
from assay.metrics.custom.llm_metrics import DiscreteMetric, RankingMetric, _TemplateMetric
from assay.schema.outcome import Error

LabelKind = Literal["binary", "ordinal", "numeric", "nominal", "ranking"]


class CallBudget:
    """At most `max_calls` model calls (None: no cap); thread-safe."""

    def __init__(self, max_calls: int | None) -> None:
        if max_calls is not None and (isinstance(max_calls, bool) or max_calls < 1):
            raise UsageError(
                f"max_calls must be a positive whole number or None, got {max_calls!r}"
            )
        self.max_calls = max_calls
        self.used = 0
        self._lock = threading.Lock()

    @property
    def left(self) -> float:
        return math.inf if self.max_calls is None else self.max_calls - self.used

    def spend(self) -> None:
        with self._lock:
            if self.max_calls is not None and self.used >= self.max_calls:
                raise BudgetExhausted(f"the call budget of {self.max_calls} model calls is spent")
            self.used += 1


class Counted:
    """A model whose `agenerate` calls are charged to a budget; everything else passes through."""

    def __init__(self, llm: Any, budget: CallBudget) -> None:
        self._llm = llm
        self._budget = budget

    async def agenerate(self, *args: Any, **kwargs: Any) -> Any:
        self._budget.spend()
        return await self._llm.agenerate(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


@dataclass
class RowScore:
    """One row's score: `value` when it worked, else `error_type` / `error`."""

    id: str
    value: Any = None
    reason: str | None = None
    error_type: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_type is None


def judge_of(metric: Any, llm: Any = None) -> Any:
    """The judge a metric runs with: the given model, else its own, else the configured default."""
    return llm or getattr(metric, "llm", None) or default_model("llm")


def metric_fields(metric: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of a labelled row this metric reads."""
    if isinstance(metric, _TemplateMetric):
        names: Sequence[str] = metric.get_variables()
    else:
        required, optional = metric.fields_for(metric._kind_of(fields))
        names = (*required, *optional)
    return {name: fields[name] for name in names if fields.get(name) is not None}


def check_rows(metric: Any, rows: Sequence[LabeledExample], source: str) -> None:
    """Every row has the fields the metric requires: a clear error naming the first that lacks one."""
    for example in rows:
        if isinstance(metric, _TemplateMetric):
            required: Sequence[str] = metric.get_variables()
        else:
            required = metric.fields_for(metric._kind_of(example.fields))[0]
        missing = [name for name in required if example.fields.get(name) in (None, "", [])]
        if missing:
            raise UsageError(
                f"{source}: row {example.id!r} lacks {', '.join(missing)}, which "
                f"{metric.name} needs (it has {', '.join(sorted(example.fields)) or 'no fields'})"
            )


def label_kind(metric: Any, labels: Sequence[Any]) -> LabelKind:
    """What kind of labels these are, for this metric (decides the statistics and the threshold)."""
    if isinstance(metric, RankingMetric):
        return "ranking"
    if isinstance(metric, DiscreteMetric):
        allowed = [str(v) for v in metric.allowed_values]
        strays = [label for label in labels if str(label) not in allowed]
        if strays:
            raise UsageError(f"label {strays[0]!r} is not one of {metric.name}'s {allowed}")
        numeric = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in metric.allowed_values
        )
        return "ordinal" if numeric else "nominal"
    if all(as_binary(label) is not None for label in labels):
        return "binary"
    if all(isinstance(label, (int, float)) and not isinstance(label, bool) for label in labels):
        if all(float(label).is_integer() for label in labels):
            return "ordinal"
        return "numeric"
    stray = next(label for label in labels if as_binary(label) is None)
    raise UsageError(
        f"{metric.name} needs yes/no (1/0) or numeric labels; got {stray!r}. Map labels with mapping="
    )


def normalise_label(kind: LabelKind, label: Any) -> Any:
    if kind == "binary":
        return as_binary(label)
    if kind in ("ordinal", "numeric") and isinstance(label, str):
        return float(label)
    return label


def _console(show: bool) -> Console:
    return Console(stderr=True, quiet=not show)


async def ascore_rows(
    metric: Any,
    rows: Sequence[LabeledExample],
    *,
    llm: Any = None,
    budget: CallBudget | None = None,
    concurrency: int = 4,
    exclude_own_group: bool = False,
    description: str = "scoring",
    show_progress: bool = True,
) -> list[RowScore]:
    """Score every row (concurrently, in input order). With `exclude_own_group`, an aligned
    metric never shows a row its own (or its group's) example."""
    budget = budget or CallBudget(None)
    judge = Counted(judge_of(metric, llm), budget)
    template = isinstance(metric, _TemplateMetric)
    scorer = copy.copy(metric)
    if not template:
        scorer.llm = judge
    results: list[RowScore | None] = [None] * len(rows)
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("calls {task.fields[calls]}"),
        console=_console(show_progress),
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=len(rows), calls=0)

        async def one(index: int) -> None:
            example = rows[index]
            fields = metric_fields(metric, example.fields)
            async with limiter:
                try:
                    with excluding([example.group_key] if exclude_own_group else []):
                        if template:
                            result = await scorer.ascore(llm=judge, **fields)
                        else:
                            result = await scorer.ascore(**fields)
                    # a yes/no judge's P(yes) when it gives one: see decision_score
                    results[index] = RowScore(example.id, decision_score(result), result.reason)
                except Exception as exc:  # a typed failure for this row, kept with its cause
                    failure = Error.from_exception(exc)
                    results[index] = RowScore(
                        example.id, error_type=failure.error_type, error=failure.message
                    )
            progress.update(task, advance=1, calls=budget.used)

        async with anyio.create_task_group() as group:
            for index in range(len(rows)):
                group.start_soon(one, index)
    return [result for result in results if result is not None]


def numeric_value(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    binary = as_binary(value)
    return float(binary) if binary is not None else None


__all__ = [
    "CallBudget",
    "Counted",
    "LabelKind",
    "RowScore",
    "ascore_rows",
    "check_rows",
    "judge_of",
    "label_kind",
    "metric_fields",
    "normalise_label",
    "numeric_value",
]
