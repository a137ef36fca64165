"""The interval of a metric's mean over rows, and how a row's repeated judgements become one value.

Methods (`method=`):
- "wilson": the Wilson score interval of a pass rate (`assay.stats.proportion.wilson`); only
  for rows whose values are all 0 or 1 (pass/fail labels read as 1/0).
- "bootstrap": the seeded percentile bootstrap of the mean that results, reports and experiment
  comparisons use (`assay.stats.bootstrap.bootstrap_mean_ci`; the same rows give the same interval).
- "t": Student's t interval of the mean (scipy).
- "auto": "wilson" when every row value is 0 or 1, else "bootstrap".

Every method resamples rows, so the interval covers both the judge's noise and which cases the
suite happens to hold. Rows are the unit: a row judged three times is one row whose value is its
`rule` over the three judgements ("majority": the verdict most judgements gave, 0.5 on a tie, for
0/1 values, and the mean for other numbers; "mean"; "median").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from assay._util.deps import require
from assay.errors import UsageError
from assay.stats.bootstrap import bootstrap_mean_ci
from assay.stats.estimate import Estimate
from assay.stats.proportion import wilson

METHODS = ("auto", "wilson", "bootstrap", "t")
RULES = ("majority", "mean", "median")


class Interval(Estimate):
    """The `Estimate` of a mean over rows (`n`: rows with a value); `mean` is `value`, the name
    assay.testing has always exported."""

    @property
    def mean(self) -> float | None:
        return self.value


def _binary(values: Sequence[float]) -> bool:
    return bool(values) and all(value in (0.0, 1.0) for value in values)


def mean_interval(values: Sequence[float], *, ci: float = 0.95, method: str = "auto") -> Interval:
    """The mean of `values` (one per row) and its `ci` interval by `method`."""
    check_ci(ci)
    if method not in METHODS:
        raise UsageError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    n = len(values)
    if method == "auto":
        method = "wilson" if _binary(values) else "bootstrap"
    if not n:
        return Interval(None, None, None, 0, method)
    mean = math.fsum(values) / n
    if method == "wilson":
        if not _binary(values):
            raise UsageError("method='wilson' needs every row value to be 0 or 1 (pass/fail)")
        low, high = wilson(int(sum(values)), n, ci)
        return Interval(mean, low, high, n, method)
    if n < 2:
        return Interval(mean, None, None, n, method)
    if method == "bootstrap":
        low, high = bootstrap_mean_ci(list(values), confidence=ci)
        return Interval(mean, low, high, n, method)
    stats = require("scipy.stats", extra="testing", package="scipy", feature="assay.testing")
    spread = statistics.stdev(values)
    if spread == 0:
        return Interval(mean, mean, mean, n, method)
    low, high = stats.t.interval(ci, n - 1, loc=mean, scale=spread / math.sqrt(n))
    return Interval(mean, float(low), float(high), n, method)


def row_value(judgements: Sequence[float], rule: str = "majority") -> float | None:
    """One row's value from its repeated judgements (those that produced a number)."""
    if rule not in RULES:
        raise UsageError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if not judgements:
        return None
    if rule == "median":
        return float(statistics.median(judgements))
    if rule == "majority" and _binary(judgements):
        passed = sum(judgements)
        failed = len(judgements) - passed
        return 1.0 if passed > failed else 0.0 if failed > passed else 0.5
    return math.fsum(judgements) / len(judgements)


def check_ci(ci: float) -> None:
    if isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1:
        raise UsageError(f"ci must be a confidence level between 0 and 1 (e.g. 0.95), got {ci!r}")


__all__ = ["METHODS", "RULES", "Interval", "check_ci", "mean_interval", "row_value"]
