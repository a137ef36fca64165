"""Replay: run an agent again on a recorded conversation, its tools answering as they did.

    from assay.simulation.replay import replay, replay_many

    result = replay(trace, agent=make_agent, model="openai/gpt-4o-mini", system_prompt="...")
    result.tool_call_diff          # the calls kept, removed and added
    result.final_answer_changed
    replays = replay_many(traces, agent=make_agent, metrics=[...])
    replays.dataset                # the regression dataset

`tools.py` is the registry the agent calls tools through (answers from the recording,
`ReplayMiss`, live calls), `run.py` the replay itself, `diff.py` the comparison, `scoring.py` the
scores through `evaluate`, `result.py` what comes back. `assay.replay` is `replay`.
"""

from assay.simulation.replay.diff import ToolCallDiff
from assay.simulation.replay.result import ReplayResult, ReplaySet
from assay.simulation.replay.run import areplay, areplay_many, replay, replay_many
from assay.simulation.replay.tools import ReplayMiss, ReplayTools, ToolUse

__all__ = [
    "ReplayMiss",
    "ReplayResult",
    "ReplaySet",
    "ReplayTools",
    "ToolCallDiff",
    "ToolUse",
    "areplay",
    "areplay_many",
    "replay",
    "replay_many",
]
