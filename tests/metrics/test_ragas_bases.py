"""Ragas' metric base-class names work (issue #15, surface): a metric written the documented Ragas way
(`MetricWithLLM, SingleTurnMetric`, `_required_columns`, `_single_turn_ascore(sample, callbacks)`) runs in
evaluate; MetricType/MetricOutputType; the protocols; create_auto_response_model; Ensember; MetricResult
traces; batch_score/abatch_score; get_correlation."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

import pytest
from pydantic import Field

from assay import (
    AIMessage,
    BaseMetric,
    DiscreteMetric,
    DiscreteMetricProtocol,
    Ensember,
    HumanMessage,
    LLMMetric,
    Metric,
    MetricOutputType,
    MetricResult,
    MetricType,
    MetricWithEmbeddings,
    MetricWithLLM,
    MultiTurnMetric,
    MultiTurnSample,
    NumericalMetric,
    NumericMetric,
    NumericMetricProtocol,
    RankingMetric,
    RankingMetricProtocol,
    SimpleBaseMetric,
    SimpleLLMMetric,
    SingleTurnMetric,
    SingleTurnSample,
    create_auto_response_model,
    discrete_metric,
    evaluate,
    numeric_metric,
    ranking_metric,
)
from assay.errors import UsageError
from tests.metrics.rag.scripted import embedder, judge


@dataclass
class RefusalRate(MetricWithLLM, SingleTurnMetric):
    """Written exactly as a Ragas user would."""

    name: str = "refusal_rate"
    _required_columns: t.Dict[MetricType, t.Set[str]] = field(  # noqa: UP006
        default_factory=lambda: {
            MetricType.SINGLE_TURN: {"user_input", "response", "reference:optional"}
        }
    )
    output_type = MetricOutputType.CONTINUOUS

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks) -> float:
        reply = await self.llm.agenerate(f"Does this refuse? {sample.response}")
        return 1.0 if reply.text.strip().lower().startswith("yes") else 0.0


@dataclass
class TurnCount(SingleTurnMetric, MultiTurnMetric):
    _required_columns: dict = field(
        default_factory=lambda: {
            MetricType.SINGLE_TURN: {"response"},
            MetricType.MULTI_TURN: {"user_input"},
        }
    )

    async def _single_turn_ascore(self, sample, callbacks):
        return 1

    async def _multi_turn_ascore(self, sample, callbacks):
        return len(sample.user_input)


def test_a_ragas_style_subclass_runs_in_evaluate_with_the_runs_model():
    llm, provider = judge("yes", "no", repeat_last=False)
    metric = RefusalRate()
    rows = [
        {"user_input": "q", "response": "I cannot help."},
        {"user_input": "q", "response": "Sure: 42."},
        {"user_input": "q"},
    ]
    result = evaluate(rows, [metric], llm=llm, show_progress=False, max_concurrency=1)
    assert result["refusal_rate"] == [1.0, 0.0, None]
    assert result.outcome(2, "refusal_rate").status == "skipped"  # no response in that row
    assert len(provider.requests) == 2 and metric.llm is None  # the run's model, in a copy
    assert (metric.required_fields, metric.optional_fields) == (
        ("response", "user_input"),
        ("reference",),
    )
    assert metric.required_columns == {"SINGLE_TURN": {"user_input", "response", "reference"}}
    assert isinstance(metric, (Metric, BaseMetric, LLMMetric)) and metric.needs_llm
    metric.init(None)  # Ragas' set-up hook is accepted
    with pytest.raises(UsageError, match="refusal_rate needs response"):
        evaluate([{"user_input": "q"}], [metric], llm=llm, show_progress=False)


def test_a_ragas_style_subclass_scored_directly():
    llm, _ = judge("yes")
    assert (
        RefusalRate(llm=llm).single_turn_score(SingleTurnSample(user_input="q", response="No."))
        == 1.0
    )
    llm, _ = judge("no")
    assert RefusalRate(llm=llm).score(user_input="q", response="Fine.").value == 0.0


def test_a_metric_of_both_kinds_and_its_default_name():
    metric = TurnCount()
    assert metric.name == "turn_count" and metric.sample_kinds == ("single_turn", "multi_turn")
    chat = MultiTurnSample(user_input=[HumanMessage(content="hi"), AIMessage(content="hello")])
    assert metric.multi_turn_score(chat) == 2
    assert metric.single_turn_score(SingleTurnSample(response="r")) == 1
    assert evaluate([chat, chat], [metric], show_progress=False)["turn_count"] == [2, 2]


def test_a_subclass_without_the_scoring_method_fails_as_a_typed_error():
    @dataclass
    class Unfinished(SingleTurnMetric):
        _required_columns: dict = field(
            default_factory=lambda: {MetricType.SINGLE_TURN: {"response"}}
        )

    outcome = evaluate([{"response": "r"}], [Unfinished()], show_progress=False).outcome(
        0, "unfinished"
    )
    assert outcome.status == "error" and outcome.error_type == "NotImplementedError"
    assert "_single_turn_ascore" in outcome.message


def test_metric_with_embeddings_gets_the_runs_embeddings():
    @dataclass
    class Similar(MetricWithEmbeddings, SingleTurnMetric):
        _required_columns: dict = field(
            default_factory=lambda: {MetricType.SINGLE_TURN: {"response"}}
        )

        async def _single_turn_ascore(self, sample, callbacks):
            return (await self.embeddings.aembed_texts([sample.response]))[0][0]

    result = evaluate(
        [{"response": "a"}],
        [Similar()],
        embeddings=embedder({"a": [0.25, 1.0]}),
        show_progress=False,
    )
    assert result["similar"] == [0.25]


def test_enums_and_aliases():
    assert (
        MetricType.SINGLE_TURN.value == "single_turn" and MetricType.MULTI_TURN.name == "MULTI_TURN"
    )
    assert {m.value for m in MetricOutputType} == {"binary", "discrete", "continuous", "ranking"}
    assert (
        SimpleBaseMetric is Metric
        and MetricWithLLM is LLMMetric
        and NumericalMetric is NumericMetric
    )
    for cls in (DiscreteMetric, NumericMetric, RankingMetric):
        assert issubclass(cls, SimpleLLMMetric)


def test_decorated_metrics_satisfy_the_protocols():
    @discrete_metric(name="same", allowed_values=["pass", "fail"])
    def same(a: str, b: str) -> str:
        return "pass" if a == b else "fail"

    @numeric_metric(name="length", allowed_values=(0, 100))
    def length(text: str) -> int:
        return len(text)

    @ranking_metric(name="by_length", allowed_values=2)
    def by_length(items: list[str]) -> list[str]:
        return sorted(items, key=len)

    assert isinstance(same, DiscreteMetricProtocol)
    assert isinstance(length, NumericMetricProtocol) and isinstance(
        by_length, RankingMetricProtocol
    )
    assert not isinstance("text", DiscreteMetricProtocol)
    assert same.batch_score([{"a": "x", "b": "x"}, {"a": "x", "b": "y"}]) == ["pass", "fail"]


def test_create_auto_response_model():
    model = create_auto_response_model(
        "ResponseModel", value=(str, Field(..., description="v")), reason=(str, ...)
    )
    assert model.__ragas_auto_generated__ is True
    assert model(value="pass", reason="r").value == "pass"
    with pytest.raises(UsageError, match="name"):
        create_auto_response_model("not a name", value=(str, ...))


def test_ensember_majority_per_position():
    runs = [
        [{"verdict": 0, "why": "a"}, {"verdict": 1}],
        [{"verdict": 0, "why": "b"}, {"verdict": 0}],
        [{"verdict": 1}, {"verdict": 1}],
    ]
    assert Ensember().from_discrete(runs, "verdict") == [{"verdict": 0, "why": "a"}, {"verdict": 1}]
    tie = [[{"v": "x"}], [{"v": "y"}]]
    assert Ensember().from_discrete(tie, "v") == [{"v": "x"}]  # a tie goes to the value seen first
    assert Ensember().from_discrete([[{"v": 1}]], "v") == [{"v": 1}]
    assert Ensember().from_discrete([[{"v": 1}], [{"v": 1}, {"v": 2}]], "v") == [
        {"v": 1}
    ]  # unequal lengths
    assert Ensember().from_discrete([[{"v": 1}], [{"w": 2}]], "v") == [
        {"v": 1}
    ]  # attribute missing
    with pytest.raises(UsageError, match="inputs"):
        Ensember().from_discrete([], "v")


def test_metric_result_traces():
    result = MetricResult(1.0, reason="ok", traces={"input": {"q": 1}, "output": "yes"})
    assert result.traces == {"input": {"q": 1}, "output": "yes"} and result == 1.0
    assert MetricResult(0.0).traces is None
    with pytest.raises(ValueError, match="'extra'"):
        MetricResult(1.0, traces={"input": 1, "extra": 2})
    with pytest.raises(UsageError, match="traces"):
        MetricResult(1.0, traces=["input"])


@pytest.mark.anyio
async def test_batch_score_and_abatch_score():
    metric = DiscreteMetric(name="ok", prompt="Is {response} fine?")
    llm, provider = judge('{"reason": "r", "value": "pass"}', '{"reason": "r", "value": "fail"}')
    assert [
        r.value
        for r in metric.batch_score([{"llm": llm, "response": "a"}, {"llm": llm, "response": "b"}])
    ] == ["pass", "fail"]
    assert ["<response>\na\n</response>" in r.messages[-1].content for r in provider.requests] == [
        True,
        False,
    ]
    llm, _ = judge('{"reason": "r", "value": "pass"}', repeat_last=True)
    results = await metric.abatch_score([{"llm": llm, "response": str(i)} for i in range(5)])
    assert [r.value for r in results] == ["pass"] * 5
    with pytest.raises(UsageError, match=r"inputs\[1\]"):
        metric.batch_score([{"response": "a"}, "b"])
    with pytest.raises(UsageError, match="inputs"):
        metric.batch_score({"response": "a"})


def test_get_correlation_of_the_custom_metrics():
    discrete = DiscreteMetric(name="d", prompt="{response}")
    # po = 3/4, pe = (2*1 + 2*3) / 16 = 1/2 -> kappa = 1/2
    assert discrete.get_correlation(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(
        0.5
    )
    assert (
        discrete.get_correlation(["a", "a"], ["a", "a"]) == 1.0
    )  # one label everywhere, full agreement
    numeric = NumericMetric(name="n", prompt="{response}", allowed_values=(0, 10))
    assert numeric.get_correlation(["1", "2", "3"], ["2", "4", "6"]) == pytest.approx(1.0)
    assert numeric.get_correlation([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    ranking = RankingMetric(name="r", prompt="{items}", allowed_values=3)
    # quadratic weights over labels 1 < 2 < 3: observed 1/6, expected 1/3 -> 1/2
    assert ranking.get_correlation([[1, 2, 3]], [[1, 3, 2]]) == pytest.approx(0.5)
    assert ranking.get_correlation([], []) == 0.0
    with pytest.raises(UsageError, match="pair up"):
        discrete.get_correlation(["a"], ["a", "b"])
    with pytest.raises(UsageError, match="gold_labels are all the same"):
        numeric.get_correlation([1, 1, 1], [1, 2, 3])
    assert discrete.get_variables() == ["response"]

    @numeric_metric(name="f", allowed_values=(0, 1))
    def f(x: float) -> float:
        return x

    assert f.get_correlation([0.1, 0.5, 0.9], [0.2, 0.6, 1.0]) == pytest.approx(1.0)
