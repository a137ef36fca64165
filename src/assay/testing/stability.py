"""`assert_stable`: a gate on how often the judge keeps its decision when asked again.

A score can pass its threshold on a judge that would have failed it on the next asking. After
`evaluate(..., repeats=N)`, this gate requires that at least a given share of each judged
metric's cells kept their decision on every asking, and optionally that their scores spread
little. It fails, naming each metric, its share and the cells it covers, and it refuses a result
with no repeated cells rather than passing on nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import UsageError
from assay.schema.stability import Stability
from assay.testing.gate import GateFailed


def assert_stable(
    result: Any,
    *,
    min_unanimous: float = 0.9,
    max_spread: float | None = None,
    metrics: Sequence[str] | None = None,
) -> list[Stability]:
    """Raise `GateFailed` unless every judged metric (or those named) has at least
    `min_unanimous` of its repeated cells unanimous and, when given, a mean spread of at most
    `max_spread`. Returns each metric's `Stability`."""
    __tracebackhide__ = True
    if not 0 <= min_unanimous <= 1:
        raise UsageError(f"min_unanimous must be between 0 and 1, got {min_unanimous!r}")
    if max_spread is not None and not max_spread >= 0:
        raise UsageError(f"max_spread must be 0 or more, got {max_spread!r}")
    measured = {s.metric: s for s in result.stability()}
    if metrics is not None:
        unknown = [name for name in metrics if name not in measured]
        if unknown:
            raise UsageError(
                f"no metric {', '.join(map(repr, unknown))} in this result; it has "
                f"{', '.join(measured)}"
            )
        chosen = [measured[name] for name in metrics]
    else:
        chosen = [s for s in measured.values() if s.cells]
    empty = [s.metric for s in chosen if not s.cells]
    if not chosen or empty:
        raise UsageError(
            f"no cell of {', '.join(empty) or 'any metric'} was asked more than once: run "
            "evaluate(..., repeats=3) (or --repeats 3) before gating on stability"
        )
    failing = []
    for s in chosen:
        share = s.share_unanimous or 0.0
        if share < min_unanimous:
            failing.append(f"{s.line()}: {share:.0%} unanimous, below {min_unanimous:.0%}")
        elif max_spread is not None and s.mean_spread is not None and s.mean_spread > max_spread:
            failing.append(f"{s.line()}: above the spread allowed, {max_spread:g}")
    if failing:
        raise GateFailed("assay stability: " + "; ".join(failing), [])
    return chosen


__all__ = ["assert_stable"]
