"""The five core RAG metrics with their defaults stay within the request budget we promise against
Ragas (13 requests per sample for the same five; our target at most 6.5), counted at the provider
on samples shaped like the Ragas baseline's: a question, 3 contexts, 2-3 sentence answers."""

from __future__ import annotations

import json
import re

import pytest

from assay import evaluate
from assay.metrics.rag import (
    AnswerRelevancy,
    ContextPrecision,
    FactualCorrectness,
    Faithfulness,
    LLMContextRecall,
)
from assay.models import LLM, Embeddings, ScriptedProvider
from assay.models.types import ModelRequest
from assay.schema.samples import SingleTurnSample

SAMPLES = [
    {
        "user_input": f"What happened to bridge {i}?",
        "retrieved_contexts": [
            f"Bridge {i} was built in 19{10 + i}. It spans the river.",
            f"Bridge {i} was repaired in 20{10 + i}.",
            "The river floods in spring.",
        ],
        "response": f"Bridge {i} was built in 19{10 + i}. It was repaired in 20{10 + i}. It is made of stone.",
        "reference": f"Bridge {i} dates from 19{10 + i} and was repaired in 20{10 + i}.",
    }
    for i in range(6)
]


def answer(request: ModelRequest) -> str:
    user = str(request.messages[-1].content)
    if request.output is not None:
        if request.output.name == "ClaimList":
            return json.dumps({"claims": ["A claim."]})
        return json.dumps({"questions": ["What happened to the bridge?"], "noncommittal": 0})
    items = re.search(r"<items>\n(.*?)\n</items>", user, flags=re.DOTALL)
    count = len(items.group(1).splitlines()) if items else 1
    return "\n".join(f"{n}. yes" for n in range(1, count + 1))


class Vectors(ScriptedProvider):
    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        self.requests.append(texts)  # type: ignore[arg-type]
        return [[1.0, float(len(text) % 7)] for text in texts], 0


def test_the_five_core_metrics_stay_within_six_and_a_half_requests_per_sample():
    provider = ScriptedProvider([answer], repeat_last=True)
    embedder = Vectors()
    metrics = [
        Faithfulness(),
        ContextPrecision(),
        LLMContextRecall(),
        FactualCorrectness(),
        AnswerRelevancy(),
    ]
    result = evaluate(
        SAMPLES, metrics, llm=LLM(provider), embeddings=Embeddings(embedder), show_progress=False
    )

    assert all(result.summary(m.name).n_ok == len(SAMPLES) for m in metrics)
    per_sample = len(provider.requests) / len(SAMPLES)
    # faithfulness 1, context precision 1, context recall 1, factual correctness 2, answer relevancy 1
    assert per_sample == 6
    assert per_sample <= 6.5
    assert (
        embedder.requests == []
    )  # answer relevancy's default verdict embeds nothing (Ragas: 2 per sample)
    # and what the metrics say about themselves agrees with what they did
    estimated = sum(m.estimate(SingleTurnSample(**SAMPLES[0])).requests for m in metrics)
    assert estimated == per_sample


@pytest.mark.parametrize(
    ("metric", "requests"),
    [
        (Faithfulness(statements="claims"), 2),
        (FactualCorrectness(statements="claims"), 4),
        (FactualCorrectness(mode="precision"), 1),
    ],
)
def test_the_opt_in_claim_splits_cost_what_they_say(metric, requests):
    provider = ScriptedProvider([answer], repeat_last=True)
    evaluate(SAMPLES[:1], [metric], llm=LLM(provider), show_progress=False)
    assert len(provider.requests) == requests
