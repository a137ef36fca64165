"""`evaluate(batch=...)` end to end on the loopback batch fake: waves, sharing, cache, prices,
failed and expired lines, refusals, progress states and resuming the batches of a stopped run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from assay import evaluate
from assay.engine.batch import BatchOptions
from assay.engine.progress import CellProgress
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.models import llm_factory
from assay.models.cache import ResponseCache
from assay.schema.outcome import Error, MetricResult
from tests.engine.batch import scenario
from tests.engine.batch.fake_batches import FakeBatches, serve
from tests.metrics.loopback import prompt_id
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, ok

FAST = BatchOptions(poll_interval=0.01)


@pytest.fixture
def server() -> Iterator[FakeBatches]:
    yield from serve()


def run(server: FakeBatches, options: BatchOptions | bool = FAST, **kwargs):
    judge = kwargs.pop("llm", None) or scenario.openai_judge(server.url)
    return evaluate(
        scenario.rows(kwargs.pop("n", scenario.N_ROWS)),
        [scenario.faithfulness(judge)],
        batch=options,
        show_progress=False,
        **kwargs,
    )


def values(result) -> list[float]:
    return [result.outcome(row, "faithfulness").value for row in range(result.n_rows)]


def test_batched_run_gives_the_live_runs_outcomes_cell_by_cell_at_half_the_cost(server):
    server.answer = scenario.judge()
    live = run(server, options=False)
    assert len(server.live) == 2 * scenario.N_ROWS and not server.created()

    batched = run(server)

    assert values(batched) == pytest.approx(scenario.EXPECTED)
    for row in range(scenario.N_ROWS):
        assert batched.outcome(row, "faithfulness") == live.outcome(row, "faithfulness")
    # Two waves: the claim splits, then the verdicts that need them; no live call.
    assert [len(batch.lines) for batch in server.created()] == [4, 4]
    assert len(server.live) == 2 * scenario.N_ROWS
    # The same tokens at gpt-4o-mini's batch price, half the live one.
    assert batched.total_tokens().input_tokens == live.total_tokens().input_tokens
    assert batched.total_cost() == pytest.approx(live.total_cost() / 2)


@pytest.mark.slow  # importing the anthropic SDK alone takes seconds on a loaded machine
def test_anthropic_message_batches_give_the_same_outcomes(server):
    server.answer = scenario.judge()

    result = run(server, llm=scenario.anthropic_judge(server.root))

    assert values(result) == pytest.approx(scenario.EXPECTED)
    made = server.created()
    assert [batch.kind for batch in made] == ["anthropic", "anthropic"]
    assert all(line["params"]["model"] == "claude-haiku-4" for line in made[0].lines)
    # claude-haiku-4 lists at $1 / $5 per million tokens; the batch is charged half.
    usage = result.total_tokens()
    assert result.total_cost() == pytest.approx(
        (usage.input_tokens * 0.5 + usage.output_tokens * 2.5) / 1e6
    )


def test_identical_requests_go_in_a_batch_once(server):
    server.answer = scenario.judge(1)
    same = [scenario.rows(1)[0]] * 3

    result = evaluate(
        same,
        [scenario.faithfulness(scenario.openai_judge(server.url))],
        batch=FAST,
        show_progress=False,
    )

    assert [result.outcome(row, "faithfulness").value for row in range(3)] == [1.0, 1.0, 1.0]
    assert [len(batch.lines) for batch in server.created()] == [1, 1]
    assert result.total_tokens().cached_requests == 4  # rows 2 and 3 shared both calls


def test_cached_answers_are_not_sent(server, tmp_path):
    server.answer = scenario.judge()
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = run(
        server, llm=llm_factory("openai/gpt-4o-mini", base_url=server.url, api_key="k", cache=cache)
    )
    assert len(server.created()) == 2

    second = run(
        server, llm=llm_factory("openai/gpt-4o-mini", base_url=server.url, api_key="k", cache=cache)
    )

    assert len(server.created()) == 2  # nothing new was submitted
    assert values(second) == values(first)
    assert second.total_tokens().requests == 0
    assert second.total_tokens().cached_requests == 2 * scenario.N_ROWS


def test_a_line_that_fails_is_asked_again_in_the_next_batch(server):
    server.answer = scenario.judge(1)
    server.line_errors.append(500)

    result = run(server, n=1)

    assert values(result) == [1.0]
    sent = [batch.custom_ids for batch in server.created()]
    assert len(sent) == 3 and sent[0] == sent[1]  # the failed claim split, asked again


def test_a_line_that_keeps_failing_ends_as_a_typed_error(server):
    server.answer = scenario.judge(1)
    server.line_errors.extend([500, 500])

    result = run(server, BatchOptions(poll_interval=0.01, max_attempts=2), n=1)

    outcome = result.outcome(0, "faithfulness")
    assert isinstance(outcome, Error)
    assert outcome.error_type == "ProviderError"
    assert "HTTP 500" in outcome.message
    assert outcome.message.endswith("(asked in 2 batches)")
    assert len(server.created()) == 2


def test_an_expired_batch_is_submitted_again(server):
    server.answer = scenario.judge()
    server.expire = 1
    server.answered_before_expiry = 1  # the first line was answered before the batch expired

    result = run(server)

    assert values(result) == pytest.approx(scenario.EXPECTED)
    first, second = server.created()[:2]
    # The next wave: the three splits the expired batch left, and the first row's verdicts.
    assert set(first.custom_ids[1:]) < set(second.custom_ids)
    assert first.custom_ids[0] not in second.custom_ids and len(second.custom_ids) == 4
    assert server.sent_custom_ids().count(first.custom_ids[0]) == 1


def test_a_batch_whose_answers_are_gone_is_asked_anew_and_not_looked_up_again(server, tmp_path):
    server.answer = scenario.judge(1)
    server.lose_files = 1

    result = run(server, n=1, run_dir=tmp_path / "run")

    assert values(result) == [1.0]
    gone, again, verdicts = server.created()
    assert again.custom_ids == gone.custom_ids and verdicts.custom_ids != gone.custom_ids
    assert (
        f'"event": "gone", "batch": "{gone.id}"' in (tmp_path / "run" / "batches.jsonl").read_text()
    )


def test_fallback_live_asks_an_expired_batchs_lines_live_at_the_live_price(server):
    server.answer = scenario.judge(1)
    server.expire = 1

    result = run(server, BatchOptions(poll_interval=0.01, fallback="live"), n=1)

    assert values(result) == [1.0]
    assert len(server.live) == 1  # the claim split went live; the verdicts came by batch
    assert len(server.created()) == 2
    usage = result.total_tokens()  # each call: 10 input and 5 output tokens (the fake's usage)
    live_cost = (10 * 0.15 + 5 * 0.60) / 1e6
    assert usage.cost == pytest.approx(live_cost + live_cost / 2)


def test_a_judge_without_a_batch_api_is_refused_before_any_work(server):
    for model in ("vllm/my-model", "ollama/llama3.1", "llamacpp/judge"):
        judge = llm_factory(model, base_url=server.url, cache=False)
        with pytest.raises(UsageError, match="has no batch API") as caught:
            run(server, llm=judge)
        assert "\n" not in str(caught.value)
    assert not server.log


def test_batch_settings_that_do_not_fit_are_refused(server):
    # (batch mode with a RayExecutor: tests/engine/ray/test_batch.py)
    with pytest.raises(UsageError, match="batch must be True, False or a BatchOptions"):
        run(server, options="yes")
    with pytest.raises(UsageError, match="fallback must be retry or live"):
        BatchOptions(fallback="later")


def test_the_budget_holds_no_request_beyond_it_is_submitted(server):
    server.answer = scenario.judge()

    result = run(server, budget=0.000001)

    assert not server.created()
    for row in range(scenario.N_ROWS):
        outcome = result.outcome(row, "faithfulness")
        assert isinstance(outcome, Error) and outcome.error_type == "BudgetExhausted"


def test_the_progress_bar_shows_each_batch_state(server, monkeypatch):
    server.answer = scenario.judge(1)
    server.delay = 0.2
    shown: list[str] = []
    monkeypatch.setattr(CellProgress, "status", lambda self, text: shown.append(text))

    run(server, n=1)

    joined = " | ".join(shown)
    for state in ("1 validating", "1 in progress", "1 finalizing", "1 completed"):
        assert state in joined
    assert shown[-1] == "batch wave 2: 1 completed; 1/1 requests"


def stop_in_flight(server: FakeBatches, run_dir) -> None:
    """Start a run, and stop it once its first batch is recorded (and still in flight)."""
    server.delay = 60.0
    executor = evaluate(
        scenario.rows(),
        [scenario.faithfulness(scenario.openai_judge(server.url))],
        batch=FAST,
        show_progress=False,
        run_dir=run_dir,
        return_executor=True,
    )
    stopped = threading.Thread(target=lambda: executor.results())
    stopped.start()
    journal = run_dir / "batches.jsonl"
    deadline = time.monotonic() + 10
    while not (journal.exists() and '"submitted"' in journal.read_text()):
        assert time.monotonic() < deadline, "the run never recorded its batch"
        time.sleep(0.01)
    executor.cancel()
    stopped.join(10)
    assert len(server.created()) == 1
    server.delay = 0.0


def test_a_stopped_run_resumes_by_polling_its_batches_without_submitting_again(server, tmp_path):
    server.answer = scenario.judge()
    run_dir = tmp_path / "run"
    stop_in_flight(server, run_dir)
    assert (run_dir / "batches.jsonl").read_text().count('"submitted"') == 1

    resumed = run(server, run_dir=run_dir)

    assert values(resumed) == pytest.approx(scenario.EXPECTED)
    first, second = server.created()
    assert len(first.lines) == 4 and len(second.lines) == 4  # the splits were never sent again
    assert server.sent_custom_ids().count(first.custom_ids[0]) == 1


@dataclass(kw_only=True)
class AsksOrWorks(Metric):
    """Asks its judge, or (response "work") works 0.4 s without a model and finishes."""

    name: str = "asks_or_works"
    needs_llm = True
    llm: Any = None
    required_fields = ("response",)

    async def _ascore(self, *, response: str) -> MetricResult:
        if response == "work":
            await asyncio.sleep(0.4)
            return MetricResult(0.0)
        return MetricResult(float(bool((await self.llm.agenerate(response)).text)))


def batch_made_after(server: FakeBatches, settle: float) -> float:
    began = time.monotonic()
    evaluate(
        [{"response": "ask"}, {"response": "work"}],
        [AsksOrWorks(llm=scenario.openai_judge(server.url))],
        batch=BatchOptions(poll_interval=0.01, settle=settle),
        show_progress=False,
    )
    return server.created()[-1].created - began


def test_a_wave_waits_for_a_cell_at_work_but_only_for_settle_seconds(server):
    # The wave goes once every cell in flight waits for an answer: here when the working cell
    # has finished...
    assert batch_made_after(server, settle=60.0) >= 0.4
    # ...unless nothing new was queued for `settle` seconds.
    assert batch_made_after(server, settle=0.05) < 0.4


def test_a_batch_made_but_never_recorded_is_found_by_its_upload(server, tmp_path):
    # A kill between the provider making the batch and the journal line: only the upload was
    # recorded. The resumed run asks the provider which batch was made of it.
    server.answer = scenario.judge()
    run_dir = tmp_path / "run"
    stop_in_flight(server, run_dir)
    journal = run_dir / "batches.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    assert '"uploaded"' in lines[0] and '"submitted"' in lines[1]
    journal.write_text(lines[0])

    resumed = run(server, run_dir=run_dir)

    assert values(resumed) == pytest.approx(scenario.EXPECTED)
    assert [len(batch.lines) for batch in server.created()] == [4, 4]
    assert ("GET", "/v1/batches") in server.log


class CutThenUnreadable(Behaviour):
    """The claim split: cut off at first, unreadable at the bigger budget, read at the repair;
    every other request as the scenario's judge answers it."""

    def __init__(self) -> None:
        self.judge = scenario.judge(1)
        self.splits = 0

    def respond(self, request: RecordedRequest) -> Reply:
        if prompt_id(request) != "claims":
            return self.judge.respond(request)
        if "could not be used" in str(request.messages[-1]["content"]):
            return ok('{"claims": ["claim 0.0"]}').respond(request)
        self.splits += 1
        if self.splits == 1:
            return ok('{"claims": ["claim 0.0", "cla', finish_reason="length").respond(request)
        return ok("Here are the claims: claim 0.0").respond(request)


def test_a_cut_off_answer_and_its_repair_are_later_waves(server):
    server.answer = CutThenUnreadable()

    result = run(server, n=1)

    assert values(result) == [1.0]
    bodies = [batch.lines[0]["body"] for batch in server.created()]
    # The split (cut off), the split with twice the room (unreadable), its repair, the verdicts.
    assert len(bodies) == 4
    assert bodies[1]["max_tokens"] == 2 * bodies[0]["max_tokens"]
    assert "could not be used" in bodies[2]["messages"][-1]["content"]
    assert prompt_id(RecordedRequest(0, "", bodies[3], {}, 1)) == "supported"
    assert not server.live
