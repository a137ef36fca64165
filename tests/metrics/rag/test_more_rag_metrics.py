"""Entity recall, noise sensitivity, the dual-judge trio and multimodal metrics (spec vectors)."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.rag.context_entity_recall import ContextEntityRecall, entity_recall
from assay.metrics.rag.dual_judge import (
    MAX_PASSAGE_CHARS,
    MIN_PASSAGE_CHARS,
    AnswerAccuracy,
    ContextRelevance,
    ResponseGroundedness,
    combine_ratings,
    split_passages,
)
from assay.metrics.rag.multimodal import MultiModalFaithfulness, MultiModalRelevance, context_part
from assay.metrics.rag.noise_sensitivity import NoiseSensitivity, noise_sensitivity_score
from assay.models.types import ModelRequest
from assay.schema.samples import SingleTurnSample
from tests.metrics.rag.scripted import judge

TAJ = ["Taj Mahal", "Yamuna", "Agra", "1631", "Shah Jahan", "Mumtaz Mahal"]


def entities(*names: str) -> str:
    return json.dumps({"entities": list(names)})


def test_entity_recall_vectors():
    assert entity_recall(["Eiffel Tower", "Paris"], ["Eiffel Tower", "Paris"]) == 0.999999995
    assert entity_recall(TAJ, ["Taj Mahal", "Agra", "Shah Jahan", "Mumtaz Mahal", "India"]) == 4 / (
        6 + 1e-8
    )
    assert entity_recall(TAJ, ["Taj Mahal", "UNESCO", "India"]) == 1 / (6 + 1e-8)
    assert entity_recall(["the  Eiffel tower"], ["The Eiffel Tower"]) == pytest.approx(1.0)


def test_entity_recall_through_the_metric():
    def answer(request: ModelRequest) -> str:
        text = request.messages[-1].content
        return (
            entities(*TAJ)
            if "1631" in text and "Yamuna" in text
            else entities("Taj Mahal", "UNESCO", "India")
        )

    llm, provider = judge(answer, answer)
    result = ContextEntityRecall(llm=llm).score(
        reference="The Taj Mahal, on the Yamuna in Agra, was begun in 1631 by Shah Jahan for Mumtaz Mahal.",
        retrieved_contexts=["The Taj Mahal is a UNESCO site in India."],
    )
    assert result.value == 1 / (6 + 1e-8)
    assert len(provider.requests) == 2
    assert "agra" in result.details["missing"]


LIC = {
    "user_input": "What is the Life Insurance Corporation of India (LIC) known for?",
    "response": "The Life Insurance Corporation of India (LIC) is the largest insurance company in India, known for its "
    "vast portfolio of investments. LIC contributes to the financial stability of the country.",
    "reference": "The Life Insurance Corporation of India (LIC) is the largest insurance company in India, established "
    "in 1956 through the nationalization of the insurance industry. It is known for managing a large "
    "portfolio of investments.",
    "retrieved_contexts": [
        "The Life Insurance Corporation of India (LIC) was established in 1956 following the nationalization of the "
        "insurance industry in India.",
        "LIC is the largest insurance company in India, with a vast network of policyholders and huge investments.",
        "As the largest institutional investor in India, LIC manages substantial funds, contributing to the financial "
        "stability of the country.",
        "The Indian economy is one of the fastest-growing major economies in the world, thanks to sectors like "
        "finance, technology, manufacturing etc.",
    ],
}
REF_CLAIMS = [
    "LIC is the largest insurer in India.",
    "LIC was established in 1956.",
    "LIC manages large investments.",
]
RESP_CLAIMS = [
    "LIC is the largest insurer in India.",
    "LIC has vast investments.",
    "LIC contributes to financial stability.",
]
# What each context supports: reference claims (3) then response claims (3).
SUPPORT = {
    "established in 1956": ["no", "yes", "no", "no", "no", "no"],
    "vast network": ["yes", "no", "yes", "yes", "yes", "no"],
    "financial": ["no", "no", "yes", "no", "yes", "yes"],
    "Indian economy": ["no"] * 6,
}


def lic_answer(request: ModelRequest) -> str:
    text = request.messages[-1].content
    if "<text>" in text:
        return json.dumps({"claims": REF_CLAIMS if "1956" in text else RESP_CLAIMS})
    source = text.split("<items>")[0]
    for key, labels in SUPPORT.items():
        if key in source and "nationalization of the insurance industry. It is" not in source:
            return "\n".join(f"{i}. {label}" for i, label in enumerate(labels, start=1))
    return "1. yes\n2. yes\n3. no"  # response claims against the reference


@pytest.mark.parametrize(
    ("mode", "expected"), [("relevant", 0.3333333333333333), ("irrelevant", 0.0)]
)
def test_noise_sensitivity_lic_vector(mode, expected):
    llm, provider = judge(*[lic_answer] * 7)
    result = NoiseSensitivity(llm=llm, mode=mode).score(**LIC)
    assert result.value == expected
    assert len(provider.requests) == 7  # 2 splits + 4 contexts + 1 against the reference


def test_noise_sensitivity_pure_irrelevant_case():
    # one incorrect claim supported only by an irrelevant context
    score = noise_sensitivity_score(
        [[True], [False]], [[False, False], [False, True]], [True, False], "irrelevant"
    )
    assert score == 0.5
    with pytest.raises(ValueError):
        NoiseSensitivity(mode="both")


EINSTEIN = [
    "Albert Einstein was born March 14, 1879.",
    "Albert Einstein was born at Ulm, in Württemberg, Germany.",
]


def test_dual_judges_reach_one_on_the_spec_examples():
    llm, _ = judge("4", "4")
    assert (
        AnswerAccuracy(llm=llm)
        .score(
            user_input="When was Einstein born?",
            response="Albert Einstein was born in 1879.",
            reference="Albert Einstein was born in 1879.",
        )
        .value
        == 1.0
    )
    llm, _ = judge("2", "2")
    assert (
        ContextRelevance(llm=llm)
        .score(user_input="When and Where Albert Einstein was born?", retrieved_contexts=EINSTEIN)
        .value
        == 1.0
    )
    llm, _ = judge("2", "2")
    assert (
        ResponseGroundedness(llm=llm)
        .score(response="Albert Einstein was born in 1879.", retrieved_contexts=EINSTEIN)
        .value
        == 1.0
    )


def test_dual_judge_falls_back_to_the_valid_rating_and_errors_when_none():
    llm, _ = judge("1", "I refuse to rate this.")
    result = ResponseGroundedness(llm=llm).score(response="x", retrieved_contexts=EINSTEIN)
    assert result.value == 0.5
    assert combine_ratings([None, 0.5]) == 0.5
    llm, _ = judge("nope", "nope")
    outcome = evaluate(
        [{"response": "x", "retrieved_contexts": EINSTEIN}],
        [ResponseGroundedness(llm=llm)],
        show_progress=False,
    ).outcome(0, "nv_response_groundedness")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    with pytest.raises(OutputParseError):
        combine_ratings([None, None])


def test_answer_accuracy_swaps_roles_in_the_second_prompt():
    llm, provider = judge("4", "2")
    AnswerAccuracy(llm=llm).score(
        user_input="q", response="RESPONSE TEXT", reference="REFERENCE TEXT"
    )
    bodies = sorted(str(r.messages[-1].content) for r in provider.requests)
    assert any(b.index("RESPONSE TEXT") < b.index("REFERENCE TEXT") for b in bodies)
    assert any(b.index("REFERENCE TEXT") < b.index("RESPONSE TEXT") for b in bodies)


def test_multimodal_sends_images_as_parts(tmp_path):
    image = tmp_path / "tesla.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    llm, provider = judge("no")
    result = MultiModalFaithfulness(llm=llm).score(
        response="Cats are cute.", retrieved_contexts=[str(image)]
    )
    assert result.value == 0.0
    parts = provider.requests[0].messages[-1].content
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    llm, _ = judge("yes")
    assert (
        MultiModalRelevance(llm=llm)
        .score(user_input="q", response="r", retrieved_contexts=["https://x.org/a.jpg"])
        .value
        == 1.0
    )
    assert context_part("plain text")["type"] == "text"
    assert context_part("data:image/gif;base64,AAAA")["type"] == "image_url"


BIRTH = (
    "Albert Einstein was born on 14 March 1879 in Ulm, in the Kingdom of Württemberg. "
    "His family moved to Munich a year later, where his father and uncle founded a company "
    "that made electrical equipment; the young Einstein went to school there until 1894. "
    "Ulm still marks the house where he was born."
)
COOKING = (
    "To make a basic risotto, warm the stock in a separate pan and keep it at a simmer. "
    "Toast the rice in butter for two minutes, add a glass of white wine, then ladle in the "
    "stock a little at a time, stirring until each addition has been absorbed by the grains. "
    "Finish with grated cheese and rest it for a minute."
)


def _relevant_when_ulm(request: ModelRequest) -> str:
    return "2" if "Ulm" in request.messages[-1].content else "0"


def test_split_passages_merges_fragments_and_keeps_contexts_apart():
    heading = "Early life"
    passages = split_passages([f"{heading}\n{BIRTH}\n\n{COOKING}", "short one", "short two"])
    # the heading joins the paragraph after it; the two short contexts stay two passages
    assert passages == [f"{heading}\n{BIRTH}", COOKING, "short one", "short two"]
    assert split_passages([f"{BIRTH}\nA short tail."]) == [f"{BIRTH}\nA short tail."]
    long_paragraph = " ".join([BIRTH] * 6)
    pieces = split_passages([long_paragraph])
    assert len(pieces) > 1 and all(len(p) <= MAX_PASSAGE_CHARS for p in pieces)
    assert split_passages([BIRTH, COOKING]) == [BIRTH, COOKING]  # short contexts stay whole
    assert len(split_passages(["x" * MIN_PASSAGE_CHARS + "\n" + "y" * MIN_PASSAGE_CHARS])) == 2


def test_context_relevance_per_passage_is_the_length_weighted_share_of_relevant_text():
    question = "Where was Albert Einstein born?"
    padded = [f"{BIRTH}\n\n{COOKING}"]
    whole, _ = judge(_relevant_when_ulm, repeat_last=True)
    # rated as a whole, the padding is invisible: the context holds the answer
    assert (
        ContextRelevance(llm=whole).score(user_input=question, retrieved_contexts=padded).value
        == 1.0
    )
    llm, provider = judge(_relevant_when_ulm, repeat_last=True)
    metric = ContextRelevance(llm=llm, granularity="passage")
    result = metric.score(user_input=question, retrieved_contexts=padded)
    assert len(provider.requests) == 4  # two passages x two judges
    assert result.value == pytest.approx(len(BIRTH) / (len(BIRTH) + len(COOKING)))
    assert [p["ratings"] for p in result.details["passages"]] == [["2", "2"], ["0", "0"]]
    focused = metric.score(user_input=question, retrieved_contexts=[BIRTH]).value
    assert focused == 1.0 > result.value
    assert (
        metric.estimate(SingleTurnSample(user_input=question, retrieved_contexts=padded)).requests
        == 4
    )


def test_context_relevance_per_passage_survives_one_judge_and_errors_when_none_rates():
    question = "Where was Albert Einstein born?"

    def first_judge_only(request: ModelRequest) -> str:
        text = request.messages[-1].content
        if "risotto" in text:
            return "no idea"
        return "2"

    llm, _ = judge(first_judge_only, repeat_last=True)
    result = ContextRelevance(llm=llm, granularity="passage").score(
        user_input=question, retrieved_contexts=[BIRTH, COOKING]
    )
    # the cooking passage has no valid rating, so the score covers the Einstein passage alone
    assert result.value == 1.0 and "1 of 2 passages" in result.reason
    llm, _ = judge("nope", repeat_last=True)
    outcome = evaluate(
        [{"user_input": question, "retrieved_contexts": [BIRTH]}],
        [ContextRelevance(llm=llm, granularity="passage")],
        show_progress=False,
    ).outcome(0, "nv_context_relevance")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    with pytest.raises(UsageError, match="granularity"):
        ContextRelevance(llm=llm, granularity="sentence")


def test_context_relevance_with_one_judge_asks_only_the_first_prompt():
    question = "Where was Albert Einstein born?"
    padded = [f"{BIRTH}\n\n{COOKING}"]
    llm, provider = judge(_relevant_when_ulm, repeat_last=True)
    metric = ContextRelevance(llm=llm, granularity="passage", judges=1)
    result = metric.score(user_input=question, retrieved_contexts=padded)
    assert len(provider.requests) == 2  # two passages x one judge
    # the question comes before the passage: the first prompt, never the alternative
    for request, passage in zip(provider.requests, (BIRTH, COOKING), strict=True):
        content = request.messages[-1].content
        assert content.index(question) < content.index(passage)
    assert result.value == pytest.approx(len(BIRTH) / (len(BIRTH) + len(COOKING)))
    assert [p["ratings"] for p in result.details["passages"]] == [["2"], ["0"]]
    assert metric.prompt_ids == ("rating_context_relevance",)
    sample = SingleTurnSample(user_input=question, retrieved_contexts=padded)
    assert metric.estimate(sample).requests == 2
    # rated as a whole: one call, one rating
    whole_llm, whole_provider = judge(_relevant_when_ulm, repeat_last=True)
    whole = ContextRelevance(llm=whole_llm, judges=1).score(
        user_input=question, retrieved_contexts=padded
    )
    assert len(whole_provider.requests) == 1
    assert whole.value == 1.0 and whole.reason.startswith("rating 2 on a 0–2 scale")
    assert whole.details["ratings"] == ["2"]
    with pytest.raises(UsageError, match="judges"):
        ContextRelevance(llm=llm, judges=3)
