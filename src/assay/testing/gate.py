"""`assert_scores`: gate a run on the interval of each metric's mean, not on the mean alone.

For a threshold ">= t" and the `ci` interval [low, high] of the mean over rows:

    low >= t            pass          (the whole interval clears the threshold)
    high < t            fail          (the whole interval misses it)
    otherwise           inconclusive  (the rows cannot tell)

An inconclusive metric is judged again (`repeats`: at most that many judgements per row, only
while some metric is inconclusive, and only for `Runs` that can re-score their dataset), then
`mode` decides what is left: "strict" fails it (the lower bound must clear the threshold),
"lenient" passes it (fail only when the upper bound is below). "<=" thresholds mirror this.
Rows whose cell failed are listed and count against `min_coverage` (skipped rows do not); a
replay cache miss fails the gate whatever the mode. With a baseline (the same test in a stored
report, or `baseline=`), the paired per-row difference must not be clearly worse.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from assay.errors import AssayError, UsageError
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.values import as_number
from assay.stats.pairing import pair_rows, paired_differences
from assay.testing import context
from assay.testing.runs import Runs, as_runs
from assay.testing.stats import check_ci, mean_interval, row_value
from assay.testing.thresholds import Threshold, parse_threshold

MODES = ("strict", "lenient")
_SHOWN = 5  # failed cells and lowest rows listed per metric


class GateFailed(AssayError, AssertionError):
    """A gate did not pass; `checks` holds every metric's decision. An AssertionError, so pytest
    reports it as a failed test, and an AssayError, so `except AssayError` sees it too."""

    def __init__(self, message: str, checks: list[MetricCheck]) -> None:
        super().__init__(message)
        self.checks = checks


class ReplayMiss(GateFailed):
    """A judge call had no recorded answer in a replay-only cache."""


class GateInconclusive(UserWarning):
    """A lenient gate passed a metric whose interval straddles its threshold."""


@dataclass
class MetricCheck:
    metric: str
    threshold: str
    mode: str
    ci: float
    method: str
    mean: float | None
    low: float | None
    high: float | None
    n_rows: int  # rows of the dataset
    n_scored: int  # rows with a value
    n_skipped: int  # rows the metric does not apply to
    repeats: int  # judgements per row
    verdict: str  # what the interval says: pass, fail, inconclusive
    decision: str  # after the mode: pass or fail
    failed_cells: list[str] = field(default_factory=list)  # "row 3: Timeout: ..."
    n_failed_cells: int = 0
    cache_misses: int = 0
    lowest: list[tuple[int, float]] = field(default_factory=list)  # rows that miss the threshold
    rows: list[dict[str, Any]] = field(default_factory=list)  # {"id", "value"} per row
    baseline: dict[str, Any] | None = None  # paired difference against the baseline
    note: str = ""

    @property
    def coverage(self) -> float:
        applicable = self.n_rows - self.n_skipped
        return self.n_scored / applicable if applicable else 0.0

    def interval_text(self) -> str:
        if self.low is None or self.high is None:
            return "no interval"
        return f"[{self.low:.3f}, {self.high:.3f}]"

    def summary_line(self) -> str:
        mean = "n/a" if self.mean is None else f"{self.mean:.3f}"
        applicable = self.n_rows - self.n_skipped
        line = (
            f"{self.metric} {self.threshold}: {self.decision.upper()} ({self.verdict})  mean {mean}, "
            f"{self.ci:.0%} interval {self.interval_text()} ({self.method}), "
            f"{self.n_scored}/{applicable} rows, {self.repeats} judgement(s) per row"
        )
        return line

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def assert_scores(
    result: Any,
    thresholds: Mapping[str, Any],
    *,
    ci: float | None = None,
    mode: str | None = None,
    method: str | None = None,
    repeats: int | None = None,
    rule: str = "majority",
    min_coverage: float = 1.0,
    baseline: Any = None,
) -> list[MetricCheck]:
    """Gate `result` (an `EvaluationResult`, a list of them, or `Runs`) on `thresholds`
    ({metric: ">=0.8"}); raise `GateFailed` naming every failing metric, else return the checks.

    Defaults come from the pytest plugin when it runs the test (`--assay-repeats`, the
    `@pytest.mark.assay(...)` marker), else ci=0.95, mode="strict", method="auto", repeats=1."""
    __tracebackhide__ = True  # pytest shows the test's line, not this function's
    ci = context.default("ci", ci, 0.95)
    mode = context.default("mode", mode, "strict")
    method = context.default("method", method, "auto")
    repeats = context.default("repeats", repeats, 1)
    check_ci(ci)
    if mode not in MODES:
        raise UsageError(f"mode must be 'strict' or 'lenient', got {mode!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise UsageError(f"repeats must be a whole number of 1 or more, got {repeats!r}")
    if not 0 <= min_coverage <= 1:
        raise UsageError(f"min_coverage must be between 0 and 1, got {min_coverage!r}")
    if not isinstance(thresholds, Mapping) or not thresholds:
        raise UsageError(
            'thresholds must map metric names to thresholds, e.g. {"faithfulness": ">=0.8"}'
        )
    runs = as_runs(result)
    parsed = {name: parse_threshold(spec, metric=name) for name, spec in thresholds.items()}
    missing = [name for name in parsed if name not in runs.metric_names]
    if missing:
        raise UsageError(
            f"no metric {', '.join(map(repr, missing))} in this result; it has "
            f"{', '.join(runs.metric_names)}"
        )

    while True:
        checks = [
            _check(runs, name, threshold, ci, mode, method, rule, min_coverage)
            for name, threshold in parsed.items()
        ]
        undecided = any(check.verdict == "inconclusive" for check in checks)
        if not undecided or not runs.can_resample or len(runs.results) >= repeats:
            break
        step = 2 if rule == "majority" else 1  # odd counts: a majority of votes cannot tie
        runs.resample(min(repeats, len(runs.results) + step))

    for check in checks:
        _compare(check, _baseline_rows(baseline, check.metric), parsed[check.metric])
    here = context.current()
    if here is not None:
        here.checks.extend(check.to_record() for check in checks)
    misses = [check for check in checks if check.cache_misses]
    if misses:
        raise ReplayMiss(_message(checks, mode, ci, replay=True), checks)
    if any(check.decision == "fail" for check in checks):
        raise GateFailed(_message(checks, mode, ci), checks)
    for check in checks:
        if check.verdict == "inconclusive":
            warnings.warn(
                GateInconclusive("passed as inconclusive (lenient): " + check.summary_line()),
                stacklevel=2,
            )
    return checks


def _check(
    runs: Runs,
    metric: str,
    threshold: Threshold,
    ci: float,
    mode: str,
    method: str,
    rule: str,
    min_coverage: float,
) -> MetricCheck:
    first = runs.results[0]
    n_rows = len(first.outcomes)
    values: list[float] = []
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    n_failed = misses = skipped = 0
    for row in range(n_rows):
        judgements = []
        row_skipped = False
        for result in runs.results:
            cell = result.outcomes[row][metric]
            if isinstance(cell, Ok):
                number = as_number(cell.value)
                if number is not None:
                    judgements.append(number)
            elif isinstance(cell, Skipped):
                row_skipped = True
            elif isinstance(cell, Error):
                n_failed += 1
                misses += cell.error_type == "CacheMiss"
                if len(failed) < _SHOWN:
                    failed.append(f"row {row}: {cell.error_type}: {cell.message}")
        value = row_value(judgements, rule)
        if value is None and row_skipped:
            skipped += 1
        if value is not None:
            values.append(value)
        rows.append({"id": _row_id(first, row), "value": value})
    found = mean_interval(values, ci=ci, method=method)
    verdict, note = _verdict(threshold, found.low, found.high, found.n)
    applicable = n_rows - skipped
    if applicable and found.n / applicable < min_coverage:
        verdict = "fail"
        note = (
            f"only {found.n} of {applicable} rows have a value (min_coverage {min_coverage:g}); "
            "see the failed cells"
        )
    if not found.n:
        verdict, note = "fail", note or "no row has a value"
    decision = verdict if verdict != "inconclusive" else ("fail" if mode == "strict" else "pass")
    lowest = sorted(
        (
            (index, row["value"])
            for index, row in enumerate(rows)
            if row["value"] is not None and not threshold.cleared_by(row["value"])
        ),
        key=lambda item: item[1] if threshold.upward else -item[1],
    )[:_SHOWN]
    return MetricCheck(
        metric=metric,
        threshold=str(threshold),
        mode=mode,
        ci=ci,
        method=found.method,
        mean=found.value,
        low=found.low,
        high=found.high,
        n_rows=n_rows,
        n_scored=found.n,
        n_skipped=skipped,
        repeats=len(runs.results),
        verdict=verdict,
        decision=decision,
        failed_cells=failed,
        n_failed_cells=n_failed,
        cache_misses=misses,
        lowest=lowest,
        rows=rows,
        note=note,
    )


def _verdict(
    threshold: Threshold, low: float | None, high: float | None, n: int
) -> tuple[str, str]:
    if low is None or high is None:
        return "inconclusive", (
            f"no interval from {n} row(s); use assert_case for one case" if n else ""
        )
    best, worst = (high, low) if threshold.upward else (low, high)
    if threshold.cleared_by(worst):
        return "pass", ""
    if not threshold.cleared_by(best):
        return "fail", ""
    return "inconclusive", "the interval straddles the threshold"


def _row_id(result: Any, row: int) -> Any:
    sample = result.dataset[row]
    metadata = getattr(sample, "metadata", None) or {}
    return metadata.get("id") if isinstance(metadata, dict) else None


def _baseline_rows(baseline: Any, metric: str) -> list[dict[str, Any]] | None:
    """The baseline's rows for `metric`: from `baseline=` (a result, `Runs`, or {metric: rows}),
    else from this test's entry in the plugin's --assay-baseline report."""
    if baseline is None:
        here = context.current()
        if here is None or here.baseline is None:
            return None
        baseline = here.baseline
    if isinstance(baseline, Mapping):
        entry = baseline.get(metric)
        if isinstance(entry, Mapping):
            entry = entry.get("rows")
        return list(entry) if entry is not None else None
    runs = as_runs(baseline)
    if metric not in runs.metric_names:
        return None
    first = runs.results[0]
    values = first[metric]
    return [{"id": _row_id(first, i), "value": as_number(v)} for i, v in enumerate(values)]


def _compare(check: MetricCheck, rows: list[dict[str, Any]] | None, threshold: Threshold) -> None:
    if rows is None:
        return
    pairing = pair_rows(rows, check.rows)
    difference = paired_differences(
        (
            pair.key,
            rows[pair.baseline]["value"] if pair.baseline is not None else None,
            check.rows[pair.other]["value"] if pair.other is not None else None,
        )
        for pair in pairing.pairs
    )
    worse = "lower" if threshold.upward else "higher"
    check.baseline = {
        "matched_by": pairing.matched_by,
        "n_pairs": difference.n_pairs,
        "mean_difference": difference.mean_delta,
        "low": difference.low,
        "high": difference.high,
        "direction": difference.direction,
        "regressed": difference.direction == worse,
    }
    if check.baseline["regressed"]:
        check.decision = "fail"
        check.note = (check.note + "; " if check.note else "") + "worse than the baseline"


def _message(checks: list[MetricCheck], mode: str, ci: float, *, replay: bool = False) -> str:
    failing = [check for check in checks if check.decision == "fail" or check.cache_misses]
    lines = [
        f"assay gate: {len(failing)} of {len(checks)} metric(s) failed (mode={mode}, ci={ci:g})"
    ]
    if replay:
        lines.append(
            "  judge calls were missing from the replay cache: the prompts, inputs or judge "
            "changed since the cache was recorded. Run once with --assay-cache=record."
        )
    for check in checks:
        lines.append("  " + check.summary_line())
        if check.note:
            lines.append(f"      {check.note}")
        if check.baseline is not None and check.baseline["mean_difference"] is not None:
            base = check.baseline
            span = (
                f"[{base['low']:+.3f}, {base['high']:+.3f}]" if base["low"] is not None else "n/a"
            )
            lines.append(
                f"      vs baseline: {base['mean_difference']:+.3f} {span} over "
                f"{base['n_pairs']} paired rows ({base['direction']})"
            )
        if check.n_failed_cells:
            lines.append(
                f"      {check.n_failed_cells} failed cell(s): " + "; ".join(check.failed_cells)
            )
        if check.lowest and check.decision == "fail":
            shown = ", ".join(f"row {row}: {value:.3g}" for row, value in check.lowest)
            lines.append(f"      rows that miss {check.threshold}: {shown}")
    return "\n".join(lines)


__all__ = ["MODES", "GateFailed", "GateInconclusive", "MetricCheck", "ReplayMiss", "assert_scores"]
