"""One cell: a metric scored on one sample, ending in a typed outcome with the usage it cost.

`score_cell` is the unit every executor runs (the in-process engine, its streamed pieces and the
Ray workers): what happened is classified here, once, into `Ok`, `Skipped` or `Error`.
"""

from __future__ import annotations

import anyio

from assay.engine.repeats import ask_repeatedly
from assay.errors import NotApplicable, first_leaf
from assay.metrics.base import Metric
from assay.models.usage import UsageMeter, metering
from assay.schema.outcome import Error, Ok, Outcome, Skipped
from assay.schema.samples import Sample
from assay.schema.usage import Usage


async def score_cell(
    metric: Metric, sample: Sample, *, timeout: float | None, repeats: int = 1
) -> tuple[Outcome, Usage]:
    """Run one metric on one sample; classify what happened and meter the model calls it made.

    `repeats` > 1 asks a judged metric that many times and combines the askings (`repeats.py`);
    the usage is all of theirs."""
    meter = UsageMeter()
    with metering(meter):
        if repeats > 1 and metric.needs_llm:
            outcome = await ask_repeatedly(
                lambda: _classify(metric, sample, timeout=timeout), repeats
            )
        else:
            outcome = await _classify(metric, sample, timeout=timeout)
    # A cell that called no model (every classic metric's) shares one empty Usage: a run keeps
    # one per cell, and 200k copies of nothing were a sizeable part of a large run's memory.
    return outcome, NO_USAGE if meter.usage == NO_USAGE else meter.usage


NO_USAGE = Usage()


async def _classify(metric: Metric, sample: Sample, *, timeout: float | None) -> Outcome:
    missing = metric.missing_fields(sample)
    if missing:
        return Skipped(reason=f"row has no {', '.join(missing)}")
    scope: anyio.CancelScope | None = None
    try:
        with anyio.fail_after(timeout) as scope:
            result = await metric.ascore_sample(sample)
    except NotApplicable as exc:
        return Skipped(reason=str(exc) or "not applicable")
    except TimeoutError as exc:
        if scope is not None and scope.cancel_called:
            return Error(
                error_type="Timeout",
                message=f"no result within {timeout:g} s for this cell "
                "(a slow judge: raise timeout= / --timeout, or lower max_concurrency)",
            )
        return Error(error_type=type(exc).__name__, message=str(exc) or "timed out")
    except Exception as group:
        leaf = first_leaf(group)  # concurrent judge calls fail as exception groups
        if isinstance(leaf, NotApplicable):
            return Skipped(reason=str(leaf) or "not applicable")
        return Error.from_exception(leaf)
    try:
        return Ok(value=result.value, reason=result.reason, details=result.details)
    except ValueError as exc:  # e.g. a non-finite float from a metric: refuse to store NaN
        return Error(error_type="InvalidValue", message=f"metric returned {result.value!r}: {exc}")


__all__ = ["NO_USAGE", "score_cell"]
