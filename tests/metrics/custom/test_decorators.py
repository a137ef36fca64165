"""@discrete_metric / @numeric_metric / @ranking_metric: the spec's vectors, sync and async functions,
and out-of-range returns (MetricError, an `error` outcome in evaluate; never clamped)."""

from __future__ import annotations

import anyio
import pytest

from assay import evaluate
from assay.errors import MetricError, UsageError
from assay.metrics.custom import FunctionMetric, discrete_metric, numeric_metric, ranking_metric
from assay.schema import MetricResult


@discrete_metric(name="sentiment", allowed_values=["positive", "negative"])
def sentiment(response: str) -> str:
    return "positive" if "good" in response else "negative"


@discrete_metric(name="sentiment3", allowed_values=["positive", "negative", "neutral"])
def sentiment3(response: str) -> str:
    text = response.lower()
    if "great" in text or "good" in text:
        return "positive"
    if "bad" in text or "poor" in text:
        return "negative"
    return "neutral"


@numeric_metric(name="relevance_score")
def relevance_score(user_input: str, response: str) -> float:
    user_words = set(user_input.lower().split())
    return len(user_words & set(response.lower().split())) / len(user_words)


@ranking_metric(allowed_values=3)
def urgency_ranking(responses: list[str]) -> list[str]:
    def urgency(text: str) -> int:
        return sum(word in text.lower() for word in ("urgent", "asap", "critical"))

    return sorted(responses, key=urgency, reverse=True)


def test_spec_vectors():
    assert isinstance(sentiment, FunctionMetric)
    result = sentiment.score(response="I'm good!")
    assert isinstance(result, MetricResult) and result.value == "positive"
    assert sentiment.score(response="I'm sad").value == "negative"
    assert sentiment3.score(response="It was great!").value == "positive"
    assert sentiment3.score(response="Pretty poor.").value == "negative"
    assert sentiment3.score(response="It was a Tuesday.").value == "neutral"
    assert (
        relevance_score.score(
            user_input="What is Python?", response="Python is a programming language"
        ).value
        == 1 / 3
    )
    assert urgency_ranking.score(
        responses=["This is urgent", "Take your time", "Critical issue!"]
    ).value == ["This is urgent", "Critical issue!", "Take your time"]


def test_names_fields_and_defaults():
    assert urgency_ranking.name == "urgency_ranking"  # the function's name by default
    assert relevance_score.required_fields == ("user_input", "response")
    assert relevance_score.allowed_values == (0.0, 1.0)
    assert urgency_ranking.kind == "ranking" and urgency_ranking.allowed_values == 3

    @discrete_metric()
    def accuracy(prediction: str, label: str, strict: bool = True) -> str:
        return "pass" if prediction == label else "fail"

    assert accuracy.allowed_values == ["pass", "fail"]
    assert accuracy.required_fields == ("prediction", "label") and accuracy.optional_fields == (
        "strict",
    )
    assert accuracy.score(prediction="x", label="x").value == "pass"
    with pytest.raises(UsageError):
        accuracy.score(prediction="x")
    with pytest.raises(UsageError):
        accuracy.score(prediction="x", label="x", extra=1)

    @ranking_metric()
    def pair(items: list[str]) -> list[str]:
        return sorted(items)

    assert pair.allowed_values == 2 and pair.score(items=["b", "a"]).value == ["a", "b"]
    with pytest.raises(UsageError):
        numeric_metric(allowed_values=(1, 0))(lambda response: 0.5)

    @numeric_metric(name="stars", allowed_values=range(1, 6))
    def stars(response: str) -> int:
        return len(response)

    assert stars.allowed_values == (1, 5) and stars.score(response="abc").value == 3


def test_a_function_may_return_a_metric_result():
    @numeric_metric(name="response_accuracy", allowed_values=(0, 1))
    def response_accuracy(predicted: float, expected: float) -> MetricResult:
        error = abs(predicted - expected) / max(expected, 1e-5)
        return MetricResult(error, reason=f"relative error {error:.2f}")

    result = response_accuracy.score(predicted=0.8, expected=1.0)
    assert result.value == pytest.approx(0.2) and result.reason == "relative error 0.20"


def test_async_functions():
    @discrete_metric(name="slow_sentiment", allowed_values=["positive", "negative"])
    async def slow_sentiment(response: str) -> str:
        await anyio.sleep(0)
        return "positive" if "good" in response else "negative"

    assert slow_sentiment.score(response="good").value == "positive"

    async def both() -> tuple:
        return await slow_sentiment.ascore(response="bad"), await sentiment.ascore(response="good")

    first, second = anyio.run(both)
    assert (first.value, second.value) == ("negative", "positive")


@pytest.mark.parametrize(
    ("kind", "allowed", "returned"),
    [
        ("discrete", ["pass", "fail"], "maybe"),
        ("numeric", (0, 1), 1.5),
        ("numeric", (0, 1), -0.1),
        ("numeric", (0, 1), True),
        ("numeric", (0, 1), "0.5"),
        ("ranking", 3, ["a", "b"]),
        ("ranking", 3, "abc"),
    ],
)
def test_an_out_of_range_return_is_a_metric_error(kind, allowed, returned):
    decorator = {"discrete": discrete_metric, "numeric": numeric_metric, "ranking": ranking_metric}[
        kind
    ]

    @decorator(name="bad", allowed_values=allowed)
    def bad(response: str):
        return returned

    with pytest.raises(MetricError):
        bad.score(response="r")
    result = evaluate([{"response": "r"}, {"response": "s"}], [bad], show_progress=False)
    outcome = result.outcome(0, "bad")
    assert outcome.status == "error" and outcome.error_type == "MetricError"
    assert result.summary("bad").n_error == 2 and result["bad"] == [None, None]


def test_in_evaluate_with_extra_columns():
    @discrete_metric(name="exact", allowed_values=["pass", "fail"])
    def exact(response: str, expected: str) -> str:
        return "pass" if response.strip() == expected.strip() else "fail"

    python = "Python is a programming language"
    result = evaluate(
        [
            {"user_input": "What is Python?", "response": python, "expected": python},
            {"response": "Lyon", "expected": "Paris"},
        ],
        [exact, relevance_score],
        show_progress=False,
    )
    assert result["exact"] == ["pass", "fail"]
    assert result.summary("exact").labels == {"pass": 1, "fail": 1}
    assert result.outcome(0, "relevance_score").value == 1 / 3
    assert result.outcome(1, "relevance_score").status == "skipped"  # this row has no user_input
    assert result.metric_specs[0]["params"]["kind"] == "discrete"


def test_a_ranking_of_indices_is_stored_by_evaluate():
    """The spec's `response_ranking` ranks responses by length and returns their indices. `.score()`
    accepts that; an evaluation run must store the same ranking as an `ok` cell, not refuse it."""

    @ranking_metric(name="response_ranking", allowed_values=3)
    def response_ranking(responses: list[str]) -> list[int]:
        return sorted(range(len(responses)), key=lambda i: len(responses[i]))

    responses = ["the longest response", "short", "a bit longer"]
    assert response_ranking.score(responses=responses).value == [1, 2, 0]
    outcome = evaluate([{"responses": responses}], [response_ranking], show_progress=False).outcome(
        0, "response_ranking"
    )
    assert outcome.status == "ok", outcome
    assert outcome.value == [1, 2, 0]


def test_metric_result_behaves_like_its_value():
    result = relevance_score.score(
        user_input="What is Python?", response="Python is a programming language"
    )
    assert result * 3 == pytest.approx(1.0) and float(result) == 1 / 3 and result < 0.5
    labelled = sentiment.score(response="I'm good!")
    assert labelled == "positive" and labelled.to_dict() == {"result": "positive", "reason": None}
