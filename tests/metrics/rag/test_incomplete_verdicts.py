"""A verdict list answered only in part is never scored as if it were complete.

The loopback server below always cuts the first verdict list of a faithfulness cell at the same
length, whatever budget is asked (a proxy with a fixed output cap does this): four statements are
asked in two lists (three, then one), the first list comes back as "1. yes" and finish_reason
"length" on every attempt. Before the fix the cell was scored on the statements that happened to
be read (here 1 of 4), reported ok; now it is a typed `OutputTruncated` error, and a rerun on the
same cache gives the same error rather than replaying the cut-off answer as a final one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from assay import evaluate
from assay.metrics.rag import Faithfulness
from assay.models import RetryPolicy, llm_factory
from assay.models.cache import ResponseCache
from assay.schema.outcome import Error, Ok
from tests.models.fake_openai import FakeOpenAI, RecordedRequest, dynamic, ok, serve, truncated

ROW = {
    "user_input": "Tell me about the bridge.",
    "retrieved_contexts": [
        "The bridge was built in 1910. It spans the river. It is made of stone."
    ],
    # four sentences: the judge is asked 3 then 1 (statements_per_call=3)
    "response": "The bridge was built in 1910. It spans the river. It is made of stone. The bridge is red.",
}
RETRY = RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05)


def _items(request: RecordedRequest) -> list[str]:
    listed = re.search(r"<items>\n(.*?)\n</items>", request.last_user_text, flags=re.DOTALL)
    return listed.group(1).splitlines() if listed else []


def full_answer(request: RecordedRequest) -> str:
    """yes for the first three sentences, no for 'The bridge is red.'"""
    return "\n".join(
        f"{n}. {'no' if 'red' in item else 'yes'}" for n, item in enumerate(_items(request), 1)
    )


def sticky_cut(request: RecordedRequest):
    """Lists of three are cut after their first verdict, on every attempt and every budget."""
    if len(_items(request)) == 3:
        return truncated("1. yes")
    return ok(full_answer(request))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def test_a_list_cut_off_on_every_attempt_is_a_typed_error_not_a_partial_score(server, tmp_path):
    server.default = dynamic(lambda request: ok(full_answer(request)))
    llm = llm_factory(server.model_string("whole"), cache=False, retry=RETRY)
    whole = evaluate([ROW], [Faithfulness(llm=llm)], show_progress=False).outcome(0, "faithfulness")
    assert isinstance(whole, Ok) and whole.value == pytest.approx(3 / 4)  # the honest score

    server.default = dynamic(sticky_cut)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for attempt in ("first run", "rerun on the warm cache"):
        llm = llm_factory(server.model_string("capped"), cache=cache, retry=RETRY)
        outcome = evaluate([ROW], [Faithfulness(llm=llm)], show_progress=False).outcome(
            0, "faithfulness"
        )
        assert isinstance(outcome, Error), (attempt, outcome)
        assert outcome.error_type == "OutputTruncated", (attempt, outcome)
    # the cut-off list was asked again with a larger budget before giving up, on each run
    budgets = {r.body.get("max_tokens") for r in server.chat_requests if len(_items(r)) == 3}
    assert len(budgets) >= 2


def test_an_item_the_judge_skipped_in_a_complete_answer_is_reported(server):
    # a complete answer ("stop") that leaves item 2 out: the documented rule leaves it out of
    # the score, and the outcome says so
    def skips_second(request: RecordedRequest):
        lines = full_answer(request).splitlines()
        return ok("\n".join(line for line in lines if not line.startswith("2.")))

    server.default = dynamic(skips_second)
    llm = llm_factory(server.model_string("skips"), cache=False, retry=RETRY)
    outcome = evaluate([ROW], [Faithfulness(llm=llm)], show_progress=False).outcome(
        0, "faithfulness"
    )
    assert isinstance(outcome, Ok)
    assert outcome.details["unjudged"] == ["It spans the river."]
    assert "no verdict on 1 item(s), left out of the score" in outcome.reason
    assert outcome.value == pytest.approx(2 / 3)
