"""Topic adherence: the spec's relativity + chocolate-cake vectors, refusals, and the pure formula."""

from __future__ import annotations

import json
import re

import pytest

from assay import evaluate
from assay.errors import NotApplicable, OutputParseError, UsageError
from assay.metrics.agent import TopicAdherence, TopicAdherenceScore
from assay.metrics.agent.topic_adherence import topic_adherence_score
from assay.models.types import ModelRequest
from assay.schema import MultiTurnSample
from tests.metrics.agent.conversations import RELATIVITY_AND_CAKE
from tests.metrics.rag.scripted import judge

TOPICS = [
    "Einstein's theory of relativity",
    "the General Theory of Relativity",
    "a chocolate cake recipe",
]
PRECISION = 0.6666666666444444
RECALL = 0.99999999995


def _items(request: ModelRequest) -> list[str]:
    text = request.messages[-1].content
    block = text.split("<items>\n", 1)[1].split("\n</items>", 1)[0]
    return [re.sub(r"^\d+\.\s*", "", line) for line in block.splitlines()]


def topic_judge(
    *, refused: set[str] = frozenset(), topics: list[str] = TOPICS, skip_on: bool = False
):
    """A scripted judge routed by request content (the two verdict calls run concurrently):
    the assistant refused exactly the topics in `refused`; a topic is science iff it mentions relativity."""

    def answer(request: ModelRequest) -> str:
        system = request.messages[0].content
        if request.output is not None:  # the structured topic-listing call
            assert "List the topics" in system
            return json.dumps({"topics": topics})
        items = _items(request)
        if "refused" in system:
            labels = ["yes" if item in refused else "no" for item in items]
        else:
            assert "allowed subject areas" in system
            labels = ["yes" if "relativity" in item.lower() else "no" for item in items]
            if skip_on:
                labels = labels[:-1]  # the judge forgets the last topic
        return "\n".join(f"{i}. {label}" for i, label in enumerate(labels, start=1))

    return judge(answer, answer, answer)


@pytest.mark.parametrize(("mode", "expected"), [("precision", PRECISION), ("recall", RECALL)])
def test_spec_vectors(mode, expected):
    llm, provider = topic_judge()
    result = TopicAdherence(llm=llm, mode=mode).score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science"]
    )
    assert result.value == expected
    assert len(provider.requests) == 3
    flags = {t["topic"]: (t["refused"], t["on_reference_topics"]) for t in result.details["topics"]}
    assert flags == {TOPICS[0]: (False, True), TOPICS[1]: (False, True), TOPICS[2]: (False, False)}
    assert result.reason.startswith("2 of 3 topics")


def test_f1_combines_the_spec_precision_and_recall():
    llm, _ = topic_judge()
    result = TopicAdherence(llm=llm).score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science"]
    )
    assert result.value == pytest.approx(
        2 * PRECISION * RECALL / (PRECISION + RECALL + 1e-10), abs=1e-15
    )
    assert result.value == pytest.approx(0.8, abs=1e-9)
    assert TopicAdherenceScore is TopicAdherence


def test_requests_carry_the_right_material():
    llm, provider = topic_judge()
    TopicAdherence(llm=llm).score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science", "history"]
    )
    listing = next(r for r in provider.requests if r.output is not None)
    refused = next(
        r for r in provider.requests if r.output is None and "refused" in r.messages[0].content
    )
    on_ref = next(
        r
        for r in provider.requests
        if r.output is None and "allowed subject" in r.messages[0].content
    )
    # The conversation, tool calls included, is fenced in the listing and refusal calls.
    for request in (listing, refused):
        body = request.messages[-1].content
        assert body.startswith("<conversation>\n")
        assert (
            "[tool call] recipe_search" in body
            and "Human: Tell me about the 'General Theory" in body
        )
    assert (
        "<reference_topics>\nscience, history\n</reference_topics>" in on_ref.messages[-1].content
    )
    assert _items(refused) == TOPICS and _items(on_ref) == TOPICS


def test_a_refused_off_topic_request_keeps_both_scores_at_one():
    # The assistant declined the cake recipe: nothing off-topic was answered, nothing on-topic refused.
    for mode in ("precision", "recall"):
        llm, _ = topic_judge(refused={TOPICS[2]})
        value = (
            TopicAdherence(llm=llm, mode=mode)
            .score(user_input=RELATIVITY_AND_CAKE, reference_topics=["science"])
            .value
        )
        assert value == 2 / (2 + 1e-10)


def test_refusing_an_on_topic_request_costs_recall():
    llm, _ = topic_judge(refused={TOPICS[1]})
    recall = TopicAdherence(llm=llm, mode="recall").score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science"]
    )
    assert recall.value == 1 / (1 + 1 + 1e-10)  # one answered on-topic, one refused on-topic
    llm, _ = topic_judge(refused={TOPICS[1]})
    precision = TopicAdherence(llm=llm, mode="precision").score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science"]
    )
    assert precision.value == 1 / (
        1 + 1 + 1e-10
    )  # one answered on-topic, one answered off-topic (the cake)


def test_a_topic_the_judge_skipped_counts_as_on_topic():
    llm, _ = topic_judge(skip_on=True)
    result = TopicAdherence(llm=llm, mode="precision").score(
        user_input=RELATIVITY_AND_CAKE, reference_topics=["science"]
    )
    assert result.value == 3 / (3 + 1e-10)


def test_pure_function():
    answered = [False, False, False]
    on = [True, True, False]
    assert topic_adherence_score(answered, on, "precision") == PRECISION
    assert topic_adherence_score(answered, on, "recall") == RECALL
    assert topic_adherence_score(answered, on) == 2 * PRECISION * RECALL / (
        PRECISION + RECALL + 1e-10
    )
    # everything refused: nothing answered, so precision and recall are 0, not NaN
    assert topic_adherence_score([True, True], [True, False], "precision") == 0.0
    assert topic_adherence_score([True, True], [True, False], "recall") == 0.0
    assert topic_adherence_score([True, True], [True, False]) == 0.0
    # a refused off-topic request counts nowhere
    assert topic_adherence_score([False, True], [True, False], "precision") == 1 / (1 + 1e-10)
    with pytest.raises(ValueError):
        topic_adherence_score([False], [True, False])


def test_no_topics_is_a_skipped_cell():
    llm, _ = judge(json.dumps({"topics": ["  "]}))
    with pytest.raises(NotApplicable):
        TopicAdherence(llm=llm).score(user_input=RELATIVITY_AND_CAKE, reference_topics=["science"])
    llm, provider = judge(json.dumps({"topics": []}))
    result = evaluate(
        [MultiTurnSample(user_input=RELATIVITY_AND_CAKE, reference_topics=["science"])],
        [TopicAdherence()],
        llm=llm,
        show_progress=False,
    )
    outcome = result.outcome(0, "topic_adherence")
    assert outcome.status == "skipped" and "no topics" in outcome.reason
    assert len(provider.requests) == 1  # no verdict calls for an empty topic list
    assert result.summary("topic_adherence").n_skipped == 1


def test_in_evaluate_and_usage_errors():
    llm, _ = topic_judge()
    result = evaluate(
        [
            {
                "user_input": [m.model_dump() for m in RELATIVITY_AND_CAKE],
                "reference_topics": ["science"],
            }
        ],
        [TopicAdherence(mode="precision")],
        llm=llm,
        show_progress=False,
    )
    assert result["topic_adherence"] == [PRECISION]
    with pytest.raises(ValueError):
        TopicAdherence(mode="accuracy")
    with pytest.raises(UsageError):  # a single-turn dataset
        evaluate(
            [{"user_input": "q", "response": "r"}], [TopicAdherence()], llm=llm, show_progress=False
        )


def test_unusable_verdicts_are_a_typed_error():
    """The two verdict calls run in a task group; a parse failure in one of them must still reach the
    caller as the typed OutputParseError (with the raw text), not as an anonymous ExceptionGroup."""

    def unusable(request: ModelRequest) -> str:
        return json.dumps({"topics": TOPICS}) if request.output is not None else "I cannot say."

    llm, _ = judge(unusable, unusable, unusable)
    outcome = evaluate(
        [MultiTurnSample(user_input=RELATIVITY_AND_CAKE, reference_topics=["science"])],
        [TopicAdherence()],
        llm=llm,
        show_progress=False,
    ).outcome(0, "topic_adherence")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert outcome.raw == "I cannot say."
    llm, _ = judge(unusable, unusable, unusable)
    with pytest.raises(OutputParseError):
        TopicAdherence(llm=llm).score(user_input=RELATIVITY_AND_CAKE, reference_topics=["science"])
