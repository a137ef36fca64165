"""Trajectories and replay scored on the embedded local runtime (llama.cpp), with SmolLM2-135M,
the dev install's test model, as the judge: plumbing only, a 135M model's verdicts mean nothing.
What is checked: a trace converted to a trajectory, and the replay of it, reach a real llama.cpp
server through `evaluate`, and every score is a typed outcome, never a NaN.

Whoever runs this must hold the machine's one-local-judge lock:
`flock /tmp/assay-judge.lock pytest -m slow tests/simulation/test_replay_local.py`."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from assay import AgentGoalAccuracyWithReference
from assay.integrations.trajectory import trace_to_sample
from assay.models.llm import LLM
from assay.simulation.replay import replay
from tests.local.conftest import smollm2_judge
from tests.simulation.test_replay import make_weather_agent

pytestmark = pytest.mark.slow

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
TRACE = {
    "id": "local-1",
    "input": "Weather in Paris?",
    "output": "It is sunny in Paris.",
    "spans": [
        {
            "id": "a",
            "kind": "llm",
            "started_at": "2026-05-04T10:00:00+00:00",
            "input": [{"role": "user", "content": "Weather in Paris?"}],
            "output": [CALL],
        },
        {
            "id": "b",
            "kind": "llm",
            "started_at": "2026-05-04T10:00:01+00:00",
            "input": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "c1", "content": '{"sky": "sunny"}'},
            ],
            "output": "It is sunny in Paris.",
        },
    ],
}


@pytest.fixture(scope="module")
def small_judge() -> Iterator[LLM]:
    with smollm2_judge(n_threads=2, n_ctx=4096, max_tokens=200) as llm:
        yield llm


def test_a_trace_and_its_replay_are_scored_on_the_local_runtime(small_judge):
    assert len(trace_to_sample(TRACE).tool_calls()) == 1
    result = replay(
        TRACE,
        agent=make_weather_agent,
        system_prompt="Briefly:",
        metrics=[AgentGoalAccuracyWithReference()],
        llm=small_judge,
        reference="The user learns that it is sunny in Paris.",
    )
    assert result.ok and result.tool_call_diff.same and result.final_answer_changed
    for side in ("original", "replayed"):
        cell = result.scores[side]["agent_goal_accuracy"]
        assert cell.status in ("ok", "skipped", "error"), cell
        if cell.status == "ok":
            assert isinstance(cell.value, float) and math.isfinite(cell.value)
            assert 0.0 <= cell.value <= 1.0
