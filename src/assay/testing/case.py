"""Single cases: `assert_case` (judged up to `repeats` times, decided by a rule) and Ragas'
`assert_in_range`.

A single case has no interval over rows; what a noisy judge needs there is several judgements
and a rule: "majority" (more than half of the judgements clear the threshold), "all", "any", or
"mean" (the mean of the judgements clears it). Judging stops as soon as the rule is decided (a
majority of 3 needs only 2 judgements that agree).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from assay.errors import UsageError
from assay.schema.aggregate import aggregate
from assay.schema.outcome import Error, Ok
from assay.schema.values import as_number
from assay.testing import context
from assay.testing.gate import GateFailed, ReplayMiss
from assay.testing.runs import Runs
from assay.testing.thresholds import parse_threshold

CASE_RULES = ("majority", "all", "any", "mean")


def _decided(rule: str, cleared: list[bool], repeats: int) -> bool | None:
    """True/False once the rule's answer cannot change with the judgements left, else None."""
    passed, done = sum(cleared), len(cleared)
    left = repeats - done
    if rule == "majority":
        if passed > repeats / 2:
            return True
        if passed + left <= repeats / 2:
            return False
    elif rule == "all":
        if passed < done:
            return False
        if not left:
            return True
    elif rule == "any":
        if passed:
            return True
        if not left:
            return False
    return None


def assert_case(
    sample: Any,
    metric: Any,
    threshold: Any,
    *,
    repeats: int | None = None,
    rule: str = "majority",
    llm: Any = None,
    embeddings: Any = None,
) -> list[Any]:
    """Score one sample with `metric` up to `repeats` times and raise `GateFailed` unless `rule`
    over the judgements clears `threshold` (">=0.7", or a number read as ">="). Returns the values.
    `llm` defaults to the plugin's `assay_judge` once a test has asked for it."""
    __tracebackhide__ = True
    repeats = context.default("repeats", repeats, 3)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise UsageError(f"repeats must be a whole number of 1 or more, got {repeats!r}")
    if rule not in CASE_RULES:
        raise UsageError(f"rule must be one of {', '.join(CASE_RULES)}, got {rule!r}")
    wanted = parse_threshold(threshold, metric=getattr(metric, "name", str(metric)))
    options: dict[str, Any] = {}
    chosen_llm = context.default("llm", llm, None)
    if chosen_llm is not None:
        options["llm"] = chosen_llm
    if embeddings is not None:
        options["embeddings"] = embeddings
    runs = Runs([sample], [metric], **options)
    values: list[Any] = []
    cleared: list[bool] = []
    errors: list[Error] = []
    verdict: bool | None = None
    for index in range(repeats):
        runs.resample(index + 1)
        result = runs.results[-1]
        name = result.metric_names[0]
        cell = result.outcomes[0][name]
        if isinstance(cell, Error):
            errors.append(cell)
            break
        number = as_number(cell.value) if isinstance(cell, Ok) else None
        if not isinstance(cell, Ok) or number is None:
            reason = cell.reason if not isinstance(cell, Ok) else f"value {cell.value!r}"
            raise GateFailed(f"assay case: {name} gave no number to compare ({reason})", [])
        values.append(cell.value)
        cleared.append(wanted.cleared_by(number))
        if rule != "mean":
            verdict = _decided(rule, cleared, repeats)
            if verdict is not None:
                break
    name = runs.results[0].metric_names[0]
    numbers = [as_number(value) for value in values]
    if rule == "mean" and not errors:
        verdict = wanted.cleared_by(math.fsum(n for n in numbers if n is not None) / len(numbers))
    record = {
        "metric": name,
        "kind": "case",
        "threshold": str(wanted),
        "rule": rule,
        "values": numbers,
        "repeats": len(runs.results),
        "decision": "pass" if verdict and not errors else "fail",
    }
    here = context.current()
    if here is not None:
        here.checks.append(record)
    shown = ", ".join(f"{n:.3g}" for n in numbers if n is not None) or "none"
    if errors:
        error = errors[0]
        kind = ReplayMiss if error.error_type == "CacheMiss" else GateFailed
        raise kind(
            f"assay case: {name} {wanted}: judgement {len(values) + 1} failed: "
            f"{error.error_type}: {error.message} (judgements so far: {shown})",
            [],
        )
    if not verdict:
        reasons = [
            cell.reason
            for result in runs.results
            for cell in [result.outcomes[0][name]]
            if isinstance(cell, Ok) and cell.reason
        ]
        why = f"; first reason: {reasons[0]}" if reasons else ""
        raise GateFailed(
            f"assay case: {name} {wanted} failed by rule {rule!r} over {len(values)} of up to "
            f"{repeats} judgement(s): {shown}{why}",
            [],
        )
    return values


def assert_in_range(score: Any, value: float, plus_or_minus: float) -> None:
    """Ragas' check: `score` within value ± plus_or_minus. `score` may be a number, a
    MetricResult, or one value per row (as `result["faithfulness"]` gives; its mean is used)."""
    if (
        not isinstance(plus_or_minus, (int, float))
        or isinstance(plus_or_minus, bool)
        or plus_or_minus < 0
    ):
        raise UsageError(f"plus_or_minus must be a number of 0 or more, got {plus_or_minus!r}")
    if isinstance(score, Iterable) and not isinstance(score, (str, bytes)):
        summary = aggregate(score)
        number, covered = summary.mean, f" (mean over {summary.n_scored}/{summary.n_rows} rows)"
    else:
        number, covered = as_number(getattr(score, "value", score)), ""
    if number is None:
        raise AssertionError(f"assert_in_range: {score!r} has no numeric value to compare")
    low, high = value - plus_or_minus, value + plus_or_minus
    if not low <= number <= high:
        raise AssertionError(
            f"assert_in_range: {number:.4f}{covered} is outside {value:g} ± {plus_or_minus:g} "
            f"[{low:g}, {high:g}]"
        )


__all__ = ["CASE_RULES", "assert_case", "assert_in_range"]
