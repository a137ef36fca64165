"""The five core RAG metrics over real HTTP while the server misbehaves on 20% of requests.

For every fault the loopback server can inject (500, 503 + Retry-After, a reset connection, a
hang, a body that is not JSON, a body that is not UTF-8, no choices, an answer cut off at its
token limit, an answer dripped byte by byte) and in two patterns (the fault hits a request's
first attempt only, or every attempt of it), each cell must end either with exactly the value a
fault-free run gives or as a typed error naming the cause. No wrong value is scored, no cut-off
answer is cached, and nothing outlives its deadline (pytest's timeout turns a hang into a failure).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable

import pytest

from assay import evaluate
from assay.metrics.rag import (
    AnswerRelevancy,
    ContextPrecision,
    FactualCorrectness,
    Faithfulness,
    LLMContextRecall,
)
from assay.models import RetryPolicy, llm_factory
from assay.models.cache import ResponseCache
from assay.schema.outcome import Error, Ok
from tests.metrics.loopback import prompt_id
from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    Reply,
    cut_body,
    drip,
    empty_choices,
    hang,
    invalid_utf8,
    malformed_body,
    ok,
    rate_limited,
    reset,
    serve,
    server_error,
    truncated,
)

ROWS = [
    {
        "user_input": f"What happened to bridge {i}?",
        "retrieved_contexts": [
            f"Bridge {i} was built in 19{10 + i}. It spans the river.",
            f"Bridge {i} was repaired in 20{10 + i}.",
            "The river floods in spring.",
        ],
        "response": f"Bridge {i} was built in 19{10 + i}. It was repaired in 20{10 + i}. It is made of stone.",
        "reference": f"Bridge {i} dates from 19{10 + i} and was repaired in 20{10 + i}. It crosses the river.",
    }
    for i in range(10)
]
METRICS = (
    "faithfulness",
    "context_precision",
    "context_recall",
    "factual_correctness",
    "answer_relevancy",
)
# The per-attempt deadline of the runs whose fault is slowness (hang, drip): short enough to trip on
# the fault, generous enough that a loaded CI machine does not trip it on a normal answer. Every
# other run (and the baseline) gets a deadline no fault-free answer comes near.
ATTEMPT_TIMEOUT = 2.5
SLOW_FAULTS = ("hang", "slow_drip")
RELAXED_TIMEOUT = 60.0
RETRY = RetryPolicy(max_attempts=4, initial_wait=0.01, max_wait=0.05)


def metrics():
    return [
        Faithfulness(),
        ContextPrecision(),
        LLMContextRecall(),
        FactualCorrectness(),
        AnswerRelevancy(),
    ]


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def correct_text(request: RecordedRequest) -> str:
    """What a consistent judge answers: a verdict per listed item, yes unless the item's hash
    says no, so scores differ between rows and metrics."""
    fmt = request.body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return json.dumps({"claims": ["A claim."]})
    text = request.last_user_text
    listed = re.search(r"<items>\n(.*?)\n</items>", text, flags=re.DOTALL)
    if listed is None:
        if prompt_id(request) == "rating_answer_completeness":  # answer relevancy's 2/1/0 grade
            return str(_digest(text) % 3)
        return "yes" if _digest(text) % 4 else "no"
    items = listed.group(1).splitlines()
    return "\n".join(
        f"{n}. {'no' if _digest(item) % 3 == 0 else 'yes'}" for n, item in enumerate(items, 1)
    )


def question_of(request: RecordedRequest) -> str:
    """A request's identity across retries (a retry with a bigger budget asks the same thing)."""
    return json.dumps(request.messages, sort_keys=True)


FAULTS: dict[str, Callable[[RecordedRequest], Behaviour]] = {
    "500": lambda r: server_error(500),
    "503_retry_after": lambda r: server_error(503, retry_after=0.05),
    "429_retry_after": lambda r: rate_limited(retry_after=0.05),
    "reset": lambda r: reset(),
    "cut_body": lambda r: cut_body(ok(correct_text(r))),
    "hang": lambda r: hang(ATTEMPT_TIMEOUT * 3),
    "malformed_json": lambda r: malformed_body(ok(correct_text(r))),
    "invalid_utf8": lambda r: invalid_utf8(ok(correct_text(r))),
    "empty_choices": lambda r: empty_choices(ok(correct_text(r))),
    "truncated": lambda r: truncated(correct_text(r)[: max(1, len(correct_text(r)) // 2)]),
    "slow_drip": lambda r: drip(0.15, ok(correct_text(r))),
}
# What a cell hit by a fault on every attempt must say about its cause.
CAUSE = {
    "500": "ProviderError",
    "503_retry_after": "ProviderError",
    "429_retry_after": "RateLimited",
    "reset": "ModelConnectionError",
    "cut_body": "ModelConnectionError",
    "hang": "ModelTimeout",
    "malformed_json": "MalformedResponse",
    "invalid_utf8": "MalformedResponse",
    "empty_choices": "MalformedResponse",
    "truncated": "OutputTruncated",
    "slow_drip": "ModelTimeout",
}


class Faulty(Behaviour):
    """Answers correctly, except that one request in five (chosen by its content) gets the fault:
    on its first attempt only, or on every attempt."""

    def __init__(self, fault: str, every_attempt: bool) -> None:
        self.fault = FAULTS[fault]
        self.every_attempt = every_attempt
        self.attempts: dict[str, int] = {}
        self.faulted: set[str] = set()
        self._lock = threading.Lock()

    def respond(self, request: RecordedRequest) -> Reply:
        question = question_of(request)
        with self._lock:
            self.attempts[question] = attempt = self.attempts.get(question, 0) + 1
        if _digest(question) % 5 == 0 and (self.every_attempt or attempt == 1):
            with self._lock:
                self.faulted.add(question)
            return self.fault(request).respond(request)
        return ok(correct_text(request)).respond(request)


@pytest.fixture(scope="module")
def server():
    yield from serve()


@pytest.fixture(scope="module")
def baseline(server: FakeOpenAI):
    server.default = Faulty("500", every_attempt=False)
    server.default.fault = lambda r: ok(correct_text(r))  # no fault at all
    llm = llm_factory(
        server.model_string("baseline"), cache=False, retry=RETRY, timeout=RELAXED_TIMEOUT
    )
    result = evaluate(ROWS, metrics(), llm=llm, show_progress=False)
    values = {
        (row, name): result.outcome(row, name) for row in range(len(ROWS)) for name in METRICS
    }
    not_ok = {key: outcome for key, outcome in values.items() if not isinstance(outcome, Ok)}
    assert not not_ok, not_ok
    assert len({outcome.value for outcome in values.values()}) > 3  # the scores do differ
    return {key: outcome.value for key, outcome in values.items()}


def run(server: FakeOpenAI, fault: str, every_attempt: bool, cache: ResponseCache):
    behaviour = Faulty(fault, every_attempt)
    server.default = behaviour
    server.reset_records()
    # The model name keeps each scenario's requests apart in the cache.
    llm = llm_factory(
        server.model_string(f"m-{fault}-{every_attempt}"),
        cache=cache,
        retry=RETRY,
        timeout=ATTEMPT_TIMEOUT if fault in SLOW_FAULTS else RELAXED_TIMEOUT,
    )
    result = evaluate(ROWS, metrics(), llm=llm, show_progress=False, timeout=60)
    return behaviour, llm, result


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_on_the_first_attempt_is_retried_and_every_value_is_the_fault_free_one(
    server, baseline, fault, tmp_path
):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    behaviour, llm, result = run(server, fault, every_attempt=False, cache=cache)

    assert behaviour.faulted, "the scenario injected no fault"
    for (row, name), expected in baseline.items():
        outcome = result.outcome(row, name)
        assert isinstance(outcome, Ok), (fault, row, name, outcome)
        assert outcome.value == pytest.approx(expected), (fault, row, name)
    assert llm.limiter.concurrency.in_flight == 0

    # Everything needed is now cached (a cut-off answer as cut off): a rerun makes no request.
    server.reset_records()
    again = evaluate(ROWS, metrics(), llm=llm, show_progress=False)
    assert server.count == 0
    assert all(again.outcome(r, n).value == pytest.approx(v) for (r, n), v in baseline.items())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_on_every_attempt_ends_as_a_typed_error_and_no_wrong_value_is_scored(
    server, baseline, fault, tmp_path
):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    _, llm, result = run(server, fault, every_attempt=True, cache=cache)

    errors = 0
    for (row, name), expected in baseline.items():
        outcome = result.outcome(row, name)
        if isinstance(outcome, Error):
            errors += 1
            assert outcome.error_type == CAUSE[fault], (fault, row, name, outcome)
            assert outcome.message
        else:
            assert isinstance(outcome, Ok), (fault, row, name, outcome)
            assert outcome.value == pytest.approx(expected), (fault, row, name)
    assert errors >= 1, "no cell was hit: the scenario tests nothing"
    summary = result.summary("faithfulness")
    assert summary.n_ok + summary.n_error == len(ROWS)  # coverage counts the failed rows
    assert llm.limiter.concurrency.in_flight == 0
    # A rerun from the cache (the same faults still on) scores exactly the same: nothing wrong was
    # kept, and the failed cells fail again for the same cause instead of turning into a value.
    rerun = evaluate(ROWS, metrics(), llm=llm, show_progress=False, timeout=60)
    for (row, name), expected in baseline.items():
        outcome = rerun.outcome(row, name)
        first = result.outcome(row, name)
        assert type(outcome) is type(first), (fault, row, name)
        if isinstance(outcome, Ok):
            assert outcome.value == pytest.approx(expected)
