"""A cell asked several times (`evaluate(..., repeats=N)`): the askings, and one outcome from them.

A judge that scores the same answer 0.2 once and 0.7 the next is telling you something its single
number hides. Each asking is its own request (`assay.models.asking`), so the N answers are N
samples of the judge, and the cell's outcome is their summary: the mean as its value (the
majority for booleans and labels), with the spread and whether the decision held every time in
`Ok.repeats`. Only metrics that call a judge are asked again: a metric without one would give the
same number N times.

`combine` is pure, so its rules are pinned by tests on scripted outcomes.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import anyio

from assay.errors import UsageError
from assay.models.asking import asking_again
from assay.schema.outcome import Error, Ok, Outcome, Repeats, Skipped, Value

MAX_REPEATS = 20  # beyond this a judge's spread is known well; the cost is not


def check_repeats(repeats: object) -> int:
    """`repeats` as a number of askings, refused before any work when it is not one."""
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        raise UsageError(
            f"repeats must be a whole number of askings (1 to {MAX_REPEATS}), got {repeats!r}"
        )
    if not 1 <= repeats <= MAX_REPEATS:
        raise UsageError(f"repeats must be from 1 to {MAX_REPEATS}, got {repeats}")
    return repeats


def repeat_settings(repeats: int) -> dict[str, int]:
    """What the run directory's fingerprint adds: nothing for one asking, so the run
    directories made before repeats existed still resume."""
    return {"repeats": repeats} if repeats > 1 else {}


async def ask_repeatedly(ask: Callable[[], Awaitable[Outcome]], repeats: int) -> Outcome:
    """Run `ask` `repeats` times at once, each as its own asking, and combine what they gave."""
    outcomes: list[Outcome | None] = [None] * repeats

    async def one(index: int) -> None:
        with asking_again(index):
            outcomes[index] = await ask()

    async with anyio.create_task_group() as group:
        for index in range(repeats):
            group.start_soon(one, index)
    return combine([outcome for outcome in outcomes if outcome is not None])


def combine(outcomes: Sequence[Outcome]) -> Outcome:
    """One outcome from the askings of a cell.

    No asking ok: the first error (or, when every asking skipped, the skip). Otherwise an `Ok`
    over the ok askings, `failed` counting the rest: numbers give their mean; booleans and labels
    the most frequent answer (a tie goes to the first asking's); rankings are not averaged and
    keep the first asking's."""
    if not outcomes:
        raise ValueError("a cell asked no times has no outcome")
    oks = [o for o in outcomes if isinstance(o, Ok)]
    if not oks:
        errors = [o for o in outcomes if isinstance(o, Error)]
        first: Error | Skipped = errors[0] if errors else _first_skip(outcomes)
        return first
    values = [o.value for o in oks]
    summary = _summary(values, failed=len(outcomes) - len(oks))
    chosen = _chosen(values, summary.mean)
    origin = next(o for o in oks if o.value == chosen) if chosen in values else oks[0]
    return Ok(value=chosen, reason=origin.reason, details=origin.details, repeats=summary)


def _first_skip(outcomes: Sequence[Outcome]) -> Skipped:
    return next(o for o in outcomes if isinstance(o, Skipped))


def _summary(values: list[Value], *, failed: int) -> Repeats:
    scalar: list[bool | int | float | str] = [v for v in values if not isinstance(v, list)]
    numbers = [float(v) for v in scalar if isinstance(v, (bool, int, float))]
    mean = statistics.fmean(numbers) if numbers and len(numbers) == len(values) else None
    spread = statistics.stdev(numbers) if mean is not None and len(numbers) > 1 else None
    return Repeats(
        n=len(values) + failed,
        values=scalar,  # rankings are not listed
        mean=mean,
        spread=0.0 if mean is not None and spread is None else spread,
        unanimous=len({_decision(v) for v in values}) == 1,
        failed=failed,
    )


def _decision(value: Value) -> object:
    """What counts as the same decision: a fraction's side of 0.5, anything else itself."""
    if isinstance(value, float):
        return value >= 0.5
    if isinstance(value, list):
        return tuple(value)
    return value


def _chosen(values: list[Value], mean: float | None) -> Value:
    first = values[0]
    if isinstance(first, (bool, str)):
        counts = Counter(values)
        best = max(counts.values())
        return next(v for v in values if counts[v] == best)  # ties: the earliest asking's
    if isinstance(first, list) or mean is None:
        return first
    return mean


__all__ = ["MAX_REPEATS", "ask_repeatedly", "check_repeats", "combine", "repeat_settings"]
