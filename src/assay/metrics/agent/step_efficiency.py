"""Step efficiency: how many of the agent's tool calls were needed?

Each tool call is a step. A step is wasted when it repeats an earlier call exactly (same tool, same
arguments: the agent already had that answer); runs of repeated calls are reported as loops (a
block of one or more calls done again and again in a row: A A A, or A B A B). When the shortest
successful trajectory is known (`reference_tool_calls`), at least `made - shortest` steps were
wasted too:

    wasted = max(repeats, made - shortest)        (repeats alone without a reference)
    score  = 1 - wasted / made

A trajectory shorter than the reference is not penalised here: doing too little is a task
completion or tool selection failure, not waste. Calls to tools whose answer changes between
identical calls (a random draw, polling a job) are named in `repeatable_tools` and never count as
repeats. No judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import NotApplicable
from assay.metrics.base import Metric
from assay.metrics.classic._offload import run, size_of
from assay.metrics.classic._tool_calls import call_key, expected_calls, made_calls
from assay.schema.outcome import MetricResult


@dataclass(frozen=True)
class Loop:
    """`block` calls starting at step `start`, done `times` times in a row."""

    start: int
    block: int
    times: int

    @property
    def end(self) -> int:
        return self.start + self.block * self.times


def first_seen(keys: list[Any]) -> list[int | None]:
    """For each step, the earlier step it repeats exactly (None when it is new)."""
    seen: dict[Any, int] = {}
    earlier: list[int | None] = []
    for index, key in enumerate(keys):
        earlier.append(seen.get(key))
        seen.setdefault(key, index)
    return earlier


def find_loops(keys: list[Any], max_block: int = 10) -> list[Loop]:
    """Non-overlapping loops, left to right: at each step the block (up to `max_block` calls)
    whose back-to-back repetition covers the most steps, the shortest block on a tie. Linear in
    the steps for a fixed `max_block`."""
    n = len(keys)
    # same[b][i]: how many steps from i on equal the step b later (a run of keys[j] == keys[j+b]).
    same: dict[int, list[int]] = {}
    for block in range(1, min(max_block, n // 2) + 1):
        run_length = [0] * (n + 1)
        for i in range(n - block - 1, -1, -1):
            run_length[i] = run_length[i + 1] + 1 if keys[i] == keys[i + block] else 0
        same[block] = run_length
    loops: list[Loop] = []
    i = 0
    while i < n:
        best: Loop | None = None
        for block, run_length in same.items():
            times = (run_length[i] + block) // block
            if times >= 2 and (best is None or block * times > best.block * best.times):
                best = Loop(i, block, times)
        if best is None:
            i += 1
            continue
        loops.append(best)
        i = best.end
    return loops


def wasted_steps(made: int, repeats: int, shortest: int | None = None) -> int:
    """max(repeats, made - shortest), or the repeats alone when the shortest is unknown."""
    return max(repeats, made - shortest) if shortest is not None else repeats


def step_efficiency_score(made: int, repeats: int, shortest: int | None = None) -> float:
    """Pure scoring: 1 - wasted/made (see `wasted_steps`)."""
    if made <= 0:
        raise ValueError("no steps to score")
    return 1 - wasted_steps(made, repeats, shortest) / made


def _efficiency(
    user_input: list[Any],
    reference_tool_calls: list[Any] | None,
    max_loop_block: int,
    repeatable: frozenset[str],
) -> MetricResult:
    calls = made_calls(user_input)
    shortest = (
        len(expected_calls(reference_tool_calls)) if reference_tool_calls is not None else None
    )
    if not calls:
        if shortest == 0:
            return MetricResult(
                1.0, reason="no tool call needed and none made", details={"steps": [], "loops": []}
            )
        raise NotApplicable("the agent made no tool call: there are no steps to weigh")
    # a repeatable tool's call is its own key, so it neither repeats nor loops
    keys: list[Any] = [
        (index,) if call.name in repeatable else call_key(call) for index, call in enumerate(calls)
    ]
    earlier = first_seen(keys)
    loops = find_loops(keys, max_loop_block)
    in_loop = {
        step: number for number, loop in enumerate(loops) for step in range(loop.start, loop.end)
    }
    steps = [
        {
            "step": index,
            "tool": call.name,
            "args": call.args,
            "repeats_step": earlier[index],
            "loop": in_loop.get(index),
        }
        for index, call in enumerate(calls)
    ]
    repeats = sum(1 for e in earlier if e is not None)
    value = step_efficiency_score(len(calls), repeats, shortest)
    reason = f"{len(calls)} call(s), {repeats} exact repeat(s)"
    if loops:
        described = ", ".join(
            f"{'→'.join(calls[s].name for s in range(loop.start, loop.start + loop.block))} "
            f"x{loop.times} from step {loop.start}"
            for loop in loops
        )
        reason += f", loop(s): {described}"
    if shortest is not None:
        reason += f"; the shortest successful trajectory has {shortest}"
    return MetricResult(
        value,
        reason=reason,
        details={
            "steps": steps,
            "loops": [
                {"start": loop.start, "block": loop.block, "times": loop.times} for loop in loops
            ],
            "repeats": repeats,
            "shortest": shortest,
            "wasted": wasted_steps(len(calls), repeats, shortest),
        },
    )


@dataclass(kw_only=True)
class StepEfficiency(Metric):
    """1 - wasted steps / steps: exact repeats of earlier calls, or the steps beyond the shortest
    successful trajectory (`reference_tool_calls`) when it is given. `max_loop_block`: the
    longest block of calls looked for when naming loops (the score does not depend on it);
    `repeatable_tools`: tools whose identical calls are not waste (random draws, polling)."""

    name: str = "step_efficiency"
    max_loop_block: int = 10
    repeatable_tools: tuple[str, ...] = ()

    sample_kind = "multi_turn"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.max_loop_block, int) or self.max_loop_block < 1:
            raise ValueError(
                f"max_loop_block must be a positive integer, got {self.max_loop_block!r}"
            )

    async def _ascore(
        self, *, user_input: list[Any], reference_tool_calls: list[Any] | None = None
    ) -> MetricResult:
        size = size_of(user_input, reference_tool_calls)
        repeatable = frozenset(self.repeatable_tools)
        return await run(
            size, _efficiency, user_input, reference_tool_calls, self.max_loop_block, repeatable
        )


__all__ = [
    "Loop",
    "StepEfficiency",
    "find_loops",
    "first_seen",
    "step_efficiency_score",
    "wasted_steps",
]
