"""AspectCritic: majority votes over independent verdicts, and the stock critics."""

from __future__ import annotations

import math

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.general import AspectCritic, harmfulness, maliciousness
from assay.metrics.general.aspect_critic import majority
from assay.metrics.registry import create_metric, metric_classes, stock_metrics
from assay.models import Generation, TokenLogprob
from assay.models.types import ModelRequest
from tests.metrics.rag.scripted import judge

EIFFEL_Q = "Where is the Eiffel Tower located?"
EIFFEL_A = "The Eiffel Tower is located in Paris."


def by_seed(*labels: str):
    """Scripted votes keyed by each request's seed: the votes run concurrently, so arrival order is not
    vote order."""

    def answer(request: ModelRequest) -> str:
        return labels[request.params["seed"]]

    return judge(*[answer] * len(labels))


def critic(strictness: int, llm) -> AspectCritic:
    return AspectCritic(
        name="helpful",
        definition="Does the response answer the question?",
        strictness=strictness,
        llm=llm,
    )


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (("yes", "no", "yes"), 1),
        (("no", "no", "yes"), 0),
        (("no", "yes", "yes"), 1),
        (("yes", "no", "no"), 0),
        (("yes", "yes", "yes"), 1),
        (("no", "no", "no"), 0),
    ],
)
def test_majority_of_three(labels, expected):
    llm, provider = by_seed(*labels)
    result = critic(3, llm).score(user_input=EIFFEL_Q, response=EIFFEL_A)
    assert result.value == expected
    assert result.details["votes"] == list(labels)
    assert result.reason == f"{labels.count('yes')} of 3 verdicts: yes"
    assert len(provider.requests) == 3


@pytest.mark.parametrize(("given", "used"), [(1, 1), (2, 3), (3, 3), (4, 5), (8, 9), (9, 9)])
def test_an_even_strictness_is_made_odd_as_in_ragas(given, used):
    """Ragas raises an even strictness by one, so a vote never ties."""
    llm, provider = by_seed(*(["yes", "no"] * 5)[:used])
    metric = critic(given, llm)
    assert metric.strictness == used
    result = metric.score(response=EIFFEL_A)
    assert len(provider.requests) == used and len(result.details["votes"]) == used


def test_majority_function():
    assert majority(["yes", "no", "yes"]) == "yes"
    assert majority(["no", "no", "yes"]) == "no"
    assert majority(["no", "yes"]) == "no"
    assert majority(["yes", "no", "no", "yes"]) == "yes"
    assert majority(["yes"]) == "yes"


def test_each_vote_has_its_own_seed_and_some_temperature():
    llm, provider = by_seed("yes", "no", "yes", "yes", "no")
    critic(5, llm).score(response=EIFFEL_A)
    assert sorted(r.params["seed"] for r in provider.requests) == [0, 1, 2, 3, 4]
    assert {r.params["temperature"] for r in provider.requests} == {0.3}
    # the votes differ only in their seed: same messages every time
    assert len({r.messages for r in provider.requests}) == 1
    llm, provider = judge("yes")
    critic(1, llm).score(response=EIFFEL_A)
    assert provider.requests[0].params["temperature"] == 0.0


def test_maliciousness_on_the_eiffel_answer_is_zero():
    llm, provider = judge("no")
    result = create_metric("maliciousness", llm=llm).score(user_input=EIFFEL_Q, response=EIFFEL_A)
    assert result.value == 0
    body = provider.requests[0].messages[-1].content
    assert f"<criterion>\n{maliciousness.definition}\n</criterion>" in body
    assert f"<response>\n{EIFFEL_A}\n</response>" in body
    assert f"<question>\n{EIFFEL_Q}\n</question>" in body
    assert "<reference>\n(not provided)\n</reference>" in body


def test_stock_critics_by_id():
    stock = stock_metrics()
    assert set(stock) == {"harmfulness", "maliciousness", "coherence", "correctness", "conciseness"}
    assert len({m.definition for m in stock.values()}) == 5
    for name in stock:
        metric = create_metric(name, strictness=3)
        assert isinstance(metric, AspectCritic) and metric.name == name and metric.strictness == 3
        assert metric.definition == stock[name].definition
    assert harmfulness.strictness == 1  # configuring a copy leaves the stock critic alone
    renamed = create_metric("harmfulness", name="harm_check")
    assert renamed.name == "harm_check" and renamed.definition == harmfulness.definition
    assert "harmfulness" not in metric_classes()  # configured instances, not classes
    with pytest.raises(UsageError):
        create_metric("harmfulnes")
    with pytest.raises(UsageError):
        create_metric("coherence", strictness=0)


def test_stock_critics_in_evaluate_by_name():
    llm, provider = judge("no", repeat_last=True)
    result = evaluate(
        [{"user_input": EIFFEL_Q, "response": EIFFEL_A}],
        ["harmfulness", "maliciousness"],
        llm=llm,
        show_progress=False,
    )
    assert result["harmfulness"] == [0] and result["maliciousness"] == [0]
    criteria = sorted(r.messages[-1].content.split("</criterion>")[0] for r in provider.requests)
    assert harmfulness.definition in criteria[0] and maliciousness.definition in criteria[1]


def test_verdict_probabilities_are_reported():
    generation = Generation(
        text="yes",
        logprobs=[
            TokenLogprob(
                token="yes", logprob=math.log(0.8), top={"yes": math.log(0.8), "no": math.log(0.2)}
            )
        ],
    )
    llm, _ = judge(generation)
    result = critic(1, llm).score(response=EIFFEL_A)
    assert result.value == 1 and result.details["probabilities"] == [0.8]


def test_configuration_errors():
    with pytest.raises(UsageError):
        AspectCritic(name="x", definition="  ")
    with pytest.raises(UsageError):
        AspectCritic(definition="Is it polite?")
    for strictness in (0, 10, 2.0, True, "3"):
        with pytest.raises(UsageError, match="strictness"):
            AspectCritic(name="x", definition="Is it polite?", strictness=strictness)
    with pytest.raises(UsageError):
        AspectCritic(name="x", definition="Is it polite?").score(user_input="q")  # no response


def test_an_unusable_verdict_is_a_typed_error():
    """A verdict that is neither yes nor no must surface as OutputParseError (raw kept), for one vote or
    several, rather than the task group's anonymous ExceptionGroup."""
    llm, _ = judge("maybe")
    with pytest.raises(OutputParseError):
        critic(1, llm).score(response=EIFFEL_A)
    llm, _ = judge("yes", "maybe", "yes")
    outcome = evaluate(
        [{"response": EIFFEL_A}], [critic(3, None)], llm=llm, show_progress=False
    ).outcome(0, "helpful")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert outcome.raw == "maybe"
