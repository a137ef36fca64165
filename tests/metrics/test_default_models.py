"""A judged metric scored on its own, with no model given, uses the configured default (issue #15, 2).

`Faithfulness().score(...)` used to fail with "'NoneType' object has no attribute 'agenerate'".
The default is built at the first score (never at construction), and the metric object is not
bound to it: a later `evaluate(llm=...)` still hands it the run's model.
"""

from __future__ import annotations

import pytest

from assay import AnswerRelevancy, DiscreteMetric, Faithfulness, SingleTurnSample, evaluate
from assay.metrics import base as metric_base
from assay.models import defaults
from tests.metrics.rag.scripted import embedder, judge, verdict_lines

CONTEXTS = ["Albert Einstein (born 14 March 1879) was a German-born theoretical physicist."]
RESPONSE = "Einstein was born in Germany. He was born in 1880."


@pytest.fixture
def default_judge(monkeypatch):
    """The configured default judge is a scripted one; counts how often it is built."""
    built = []

    def fake_default_llm(**_):
        llm, provider = judge(verdict_lines("yes", "no"), repeat_last=True)
        built.append(provider)
        return llm

    monkeypatch.setattr(defaults, "default_llm", fake_default_llm)
    metric_base.forget_default_models()
    yield built
    metric_base.forget_default_models()


def test_score_without_a_model_uses_the_default(default_judge):
    metric = Faithfulness()
    result = metric.score(response=RESPONSE, retrieved_contexts=CONTEXTS)
    assert result.value == pytest.approx(0.5)
    assert len(default_judge) == 1 and len(default_judge[0].requests) == 1
    assert metric.llm is None  # the metric is not bound to the default


@pytest.mark.anyio
async def test_every_direct_scoring_form_uses_the_default(default_judge):
    sample = SingleTurnSample(response=RESPONSE, retrieved_contexts=CONTEXTS)
    metric = Faithfulness()
    assert (
        await metric.ascore(response=RESPONSE, retrieved_contexts=CONTEXTS)
    ).value == pytest.approx(0.5)
    assert await metric.single_turn_ascore(sample) == pytest.approx(0.5)
    assert (await metric.ascore_sample(sample)).value == pytest.approx(0.5)
    # built once, lazily, and reused
    assert len(default_judge) == 1 and len(default_judge[0].requests) == 3


def test_single_turn_score_sync_uses_the_default(default_judge):
    sample = SingleTurnSample(response=RESPONSE, retrieved_contexts=CONTEXTS)
    assert Faithfulness().single_turn_score(sample) == pytest.approx(0.5)


def test_nothing_is_built_at_construction(default_judge):
    Faithfulness()
    DiscreteMetric(name="d", prompt="Is {response} fine?")
    assert default_judge == []


def test_template_metric_without_llm_uses_the_default(monkeypatch):
    metric_base.forget_default_models()
    llm, provider = judge('{"reason": "fine", "value": "pass"}')
    monkeypatch.setattr(defaults, "default_llm", lambda **_: llm)
    result = DiscreteMetric(name="d", prompt="Is {response} fine?").score(response="ok")
    assert result.value == "pass" and len(provider.requests) == 1
    metric_base.forget_default_models()


def test_embeddings_default_too(monkeypatch):
    metric_base.forget_default_models()
    llm, _ = judge('{"questions": ["Where was Einstein born?"], "noncommittal": 0}')
    vectors = embedder(
        {"Where was Einstein born?": [1.0, 0.0], "Einstein's birthplace?": [0.6, 0.8]}
    )
    monkeypatch.setattr(defaults, "default_llm", lambda **_: llm)
    monkeypatch.setattr(defaults, "default_embeddings", lambda *a, **k: vectors)
    result = AnswerRelevancy(method="questions", strictness=1).score(
        user_input="Einstein's birthplace?", response="Einstein was born in Ulm."
    )
    assert result.value == pytest.approx(0.6)
    metric_base.forget_default_models()


def test_a_metric_scored_alone_still_takes_the_runs_model(default_judge):
    metric = Faithfulness()
    metric.score(response=RESPONSE, retrieved_contexts=CONTEXTS)
    run_llm, run_provider = judge(verdict_lines("yes", "yes"))
    result = evaluate(
        [{"response": RESPONSE, "retrieved_contexts": CONTEXTS}],
        [metric],
        llm=run_llm,
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0]
    assert len(run_provider.requests) == 1
