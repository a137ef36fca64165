"""Callbacks: hooks called around a run, each row and each (row, metric) cell.

    class Printer(EvaluationCallback):
        def on_metric_end(self, row, metric, outcome, usage):
            print(row, metric, outcome.status, usage.total_tokens)

    evaluate(dataset, metrics, callbacks=[Printer()])

A callback is any object with some of the methods of `EvaluationCallback` (the others are not
called); a method may be sync or async. `row` is the dataset index, or None when a metric is
scored on its own (`metric.single_turn_ascore(sample, callbacks=[...])`). A row starts with its
first cell and ends with its last, with every outcome of the row; rows wholly restored from a run
directory are not announced.

LangChain callback handlers (`BaseCallbackHandler`, e.g. `LangChainTracer`, Opik's tracer) and
callback managers are accepted too: they see the run as nested chains named as Ragas names them —
the evaluation (`experiment_name`, else "ragas evaluation", Ragas' `RAGAS_EVALUATION_CHAIN_NAME`,
the name Ragas' OpikTracer looks for) ending with `{"scores": [...]}`; a chain `row {i}` per row
with the sample as inputs, ending with `{metric name: value}` (NaN for a cell that failed or was
skipped, as in Ragas, so a tracer can round every value); and a chain per metric with the sample
as inputs, ending with `{"output": value}`, or `on_chain_error` for a cell that failed. A handler
whose `ignore_chain` is true is skipped. An exception raised by a callback is logged as a warning
and the run goes on, unless the handler sets `raise_error = True`.
"""

from __future__ import annotations

import inspect
import logging
import math
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from assay.errors import MetricError, UsageError
from assay.schema.outcome import Error, Ok, Outcome
from assay.schema.usage import Usage

logger = logging.getLogger("assay.callbacks")

#: The root chain's name when the run has no `experiment_name` (Ragas' constant, same value).
RAGAS_EVALUATION_CHAIN_NAME = "ragas evaluation"

HOOKS = (
    "on_run_start",
    "on_run_end",
    "on_run_error",
    "on_row_start",
    "on_row_end",
    "on_metric_start",
    "on_metric_end",
)


class EvaluationCallback:
    """Every hook, doing nothing; subclass and override the ones you need."""

    def on_run_start(self, name: str, n_rows: int, metrics: list[str]) -> Any:
        """The run begins: its name, how many rows, which metrics."""

    def on_run_end(self, result: Any) -> Any:
        """The run ended; `result` is the EvaluationResult."""

    def on_run_error(self, error: BaseException) -> Any:
        """The run stopped with `error` (e.g. RunFailed under raise_exceptions=True)."""

    def on_row_start(self, row: int, sample: Any) -> Any:
        """The first cell of row `row` starts."""

    def on_row_end(self, row: int, outcomes: dict[str, Outcome]) -> Any:
        """The last cell of row `row` ended; every outcome of the row, by metric name."""

    def on_metric_start(self, row: int | None, metric: str) -> Any:
        """Metric `metric` starts on row `row` (None: scored on its own)."""

    def on_metric_end(self, row: int | None, metric: str, outcome: Outcome, usage: Usage) -> Any:
        """Metric `metric` ended on row `row`: its typed outcome and the model usage it cost."""


def _is_a(value: Any, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(value, cls)


def _value_of(outcome: Outcome) -> Any:
    return outcome.value if isinstance(outcome, Ok) else None


def _score_of(outcome: Outcome) -> Any:
    """A cell's value in a chain's outputs: NaN where it failed or was skipped, as Ragas sends."""
    return outcome.value if isinstance(outcome, Ok) else math.nan


class LangChainChains(EvaluationCallback):
    """Presents a run to a LangChain callback handler as nested chains (evaluation > row > metric)."""

    def __init__(self, handler: Any, name: str = RAGAS_EVALUATION_CHAIN_NAME) -> None:
        self.handler = handler
        self.name = name
        self.run_id: uuid.UUID | None = None
        self.rows: dict[int, uuid.UUID] = {}
        self.inputs: dict[int, dict[str, Any]] = {}  # each started row's sample, for its metrics
        self.cells: dict[tuple[int | None, str], uuid.UUID] = {}

    def _start(
        self,
        name: str,
        inputs: dict[str, Any],
        run_id: uuid.UUID,
        parent: uuid.UUID | None,
        kind: str,
        **metadata: Any,
    ) -> Any:
        return self.handler.on_chain_start(
            {"name": name},
            inputs,
            run_id=run_id,
            parent_run_id=parent,
            name=name,
            metadata={"type": kind, **metadata},
        )

    def on_run_start(self, name: str, n_rows: int, metrics: list[str]) -> Any:
        self.name, self.run_id = name, uuid.uuid4()
        return self._start(
            name, {}, self.run_id, None, "evaluation", n_rows=n_rows, metrics=metrics
        )

    def on_run_end(self, result: Any) -> Any:
        scores = [{name: _score_of(cell) for name, cell in row.items()} for row in result.outcomes]
        return self.handler.on_chain_end({"scores": scores}, run_id=self.run_id, parent_run_id=None)

    def on_run_error(self, error: BaseException) -> Any:
        return self.handler.on_chain_error(error, run_id=self.run_id, parent_run_id=None)

    def on_row_start(self, row: int, sample: Any) -> Any:
        self.rows[row] = uuid.uuid4()
        inputs = self.inputs[row] = sample.to_dict()
        return self._start(f"row {row}", inputs, self.rows[row], self.run_id, "row", row_index=row)

    def on_row_end(self, row: int, outcomes: dict[str, Outcome]) -> Any:
        scores = {name: _score_of(outcome) for name, outcome in outcomes.items()}
        self.inputs.pop(row, None)
        return self.handler.on_chain_end(
            scores, run_id=self.rows.pop(row, None), parent_run_id=self.run_id
        )

    def on_metric_start(self, row: int | None, metric: str) -> Any:
        run_id = self.cells[(row, metric)] = uuid.uuid4()
        parent = self.rows.get(row) if row is not None else None
        inputs = dict(self.inputs.get(row, {})) if row is not None else {}
        return self._start(metric, inputs, run_id, parent, "metric")

    def on_metric_end(self, row: int | None, metric: str, outcome: Outcome, usage: Usage) -> Any:
        run_id = self.cells.pop((row, metric), None)
        parent = self.rows.get(row) if row is not None else None
        if isinstance(outcome, Error):
            error = MetricError(f"{outcome.error_type}: {outcome.message}")
            return self.handler.on_chain_error(error, run_id=run_id, parent_run_id=parent)
        return self.handler.on_chain_end(
            {"output": _value_of(outcome)}, run_id=run_id, parent_run_id=parent
        )


class Callbacks:
    """The callbacks of one run or one scoring call, called in order."""

    def __init__(self, given: Any = None, *, name: str = RAGAS_EVALUATION_CHAIN_NAME) -> None:
        self.handlers: list[
            tuple[Any, Any]
        ] = []  # (object whose hooks are called, the object given)
        items = (
            getattr(given, "handlers", None)
            if _is_a(given, "langchain_core.callbacks", "BaseCallbackManager")
            else given
        )
        if items is None:
            items = []
        elif not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
            items = [items]
        for position, item in enumerate(items):
            if _is_a(item, "langchain_core.callbacks", "BaseCallbackHandler"):
                if not getattr(item, "ignore_chain", False):
                    self.handlers.append((LangChainChains(item, name), item))
            elif any(callable(getattr(item, hook, None)) for hook in HOOKS):
                self.handlers.append((item, item))
            else:
                raise UsageError(
                    f"callbacks[{position}] is a {type(item).__name__}, with none of the hooks "
                    f"{', '.join(HOOKS)} (subclass assay.EvaluationCallback) and not a LangChain "
                    "callback handler"
                )

    def __bool__(self) -> bool:
        return bool(self.handlers)

    async def emit(self, hook: str, *args: Any) -> None:
        for target, given in self.handlers:
            method = getattr(target, hook, None)
            if not callable(method):
                continue
            try:
                result = method(*args)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                if getattr(given, "raise_error", False):
                    raise
                logger.warning(
                    "callback %s.%s failed: %s: %s",
                    type(given).__name__,
                    hook,
                    type(exc).__name__,
                    exc,
                )


__all__ = ["RAGAS_EVALUATION_CHAIN_NAME", "Callbacks", "EvaluationCallback", "LangChainChains"]
