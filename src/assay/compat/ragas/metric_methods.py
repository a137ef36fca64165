"""Ragas' scoring methods on every assay metric: `single_turn_score` / `single_turn_ascore`,
`multi_turn_score` / `multi_turn_ascore` (a whole sample in, the value out) and `init`.

assay's own spelling is `metric.score(**fields)` / `await metric.ascore(**fields)` returning a
`MetricResult`, or `ascore_sample(sample)`. The Ragas methods return the bare value, as Ragas
does; `callbacks` see this one metric start and end (row None), and `timeout` bounds the call in
seconds (TimeoutError beyond it). `install` attaches them to `Metric`.
"""

from __future__ import annotations

from typing import Any

import anyio

from assay._util.sync import run_sync
from assay.metrics.callbacks import Callbacks
from assay.models.usage import UsageMeter, metering
from assay.schema.outcome import Error, MetricResult, Ok
from assay.schema.samples import Sample


async def _ascore_traced(
    metric: Any, sample: Sample, callbacks: Any, timeout: float | None
) -> MetricResult:
    hooks = Callbacks(callbacks)
    if not hooks:
        with anyio.fail_after(timeout):
            return await metric.ascore_sample(sample)
    await hooks.emit("on_metric_start", None, metric.name)
    meter = UsageMeter()
    try:
        with metering(meter), anyio.fail_after(timeout):
            result = await metric.ascore_sample(sample)
    except Exception as exc:
        failure = Error.from_exception(exc)
        await hooks.emit("on_metric_end", None, metric.name, failure, meter.usage)
        raise
    try:
        outcome: Any = Ok(value=result.value, reason=result.reason, details=result.details)
    except ValueError as exc:  # a value an outcome cannot hold; the caller still gets it
        outcome = Error(
            error_type="InvalidValue", message=f"metric returned {result.value!r}: {exc}"
        )
    await hooks.emit("on_metric_end", None, metric.name, outcome, meter.usage)
    return result


async def single_turn_ascore(
    self: Any, sample: Sample, callbacks: Any = None, timeout: float | None = None
) -> Any:
    """The metric's value for `sample` (Ragas' spelling of `ascore_sample(sample).value`)."""
    return (await _ascore_traced(self, sample, callbacks, timeout)).value


def single_turn_score(self: Any, sample: Sample, callbacks: Any = None) -> Any:
    return run_sync(single_turn_ascore(self, sample, callbacks))


def init(self: Any, run_config: Any = None) -> None:
    """Ragas' set-up hook; an assay metric needs none (evaluate applies the RunConfig)."""


METHODS = {
    "single_turn_ascore": single_turn_ascore,
    "single_turn_score": single_turn_score,
    "multi_turn_ascore": single_turn_ascore,
    "multi_turn_score": single_turn_score,
    "init": init,
}


def attach_scoring_methods(cls: type) -> None:
    """Give `cls` (Metric) the Ragas methods it does not define itself."""
    for name, method in METHODS.items():
        if name not in vars(cls):
            setattr(cls, name, method)


__all__ = ["METHODS", "attach_scoring_methods"]
