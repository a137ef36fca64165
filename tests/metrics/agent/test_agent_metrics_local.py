"""The judged agent metrics on the embedded local runtime (llama.cpp), with SmolLM2-135M, the dev
install's test model, as the judge: plumbing only, a 135M model's verdicts mean nothing. What is
checked: the prompts reach a real llama.cpp server and every cell ends in a typed outcome, never a
NaN. The measured quality, on the 1.5B embedded judge, is benchmarks/results/agent_metrics_judged.md.

Whoever runs this must hold the machine's one-local-judge lock:
`flock /tmp/assay-judge.lock pytest -m slow tests/metrics/agent/test_agent_metrics_local.py`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay import evaluate
from assay.metrics.agent import PlanAdherence, TaskCompletion
from assay.models.llm import LLM
from tests.local.conftest import smollm2_judge
from tests.metrics.agent.trajectories import GOAL, simulated, with_shortest
from tests.simulation.scripted import say, scripted_judge, scripted_user

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small_judge() -> Iterator[LLM]:
    with smollm2_judge(n_threads=2, n_ctx=4096, max_tokens=200) as llm:
        yield llm


def test_task_completion_and_plan_adherence_end_in_typed_outcomes(small_judge):
    user, _ = scripted_user({GOAL: [say(GOAL)]})
    goal_judge, _ = scripted_judge(lambda goal, conversation: '"status": "booked"' in conversation)
    rows = [
        with_shortest(simulated(outcome, user, goal_judge).dataset[0])
        for outcome in ("succeeds", "loops")
    ]
    metrics = [TaskCompletion(), PlanAdherence()]
    result = evaluate(rows, metrics, llm=small_judge, show_progress=False)
    for row in range(len(rows)):
        for metric in metrics:
            cell = result.outcome(row, metric.name)
            assert cell.status in ("ok", "skipped", "error"), cell
            if cell.status == "ok":
                assert 0.0 <= cell.value <= 1.0
                items = cell.details["tasks" if metric.name == "task_completion" else "steps"]
                assert items and all("passed" in item for item in items)
            if cell.status == "error":
                assert cell.error_type in ("OutputParseError", "OutputTruncated"), cell
    assert result.usage().requests >= len(rows) * len(metrics)
    assert result.usage().cost == 0.0
