"""RagMetrics-style `Criteria`: 5-point, bool and prompt judges, string_match functions, phases,
invalid configurations, use in evaluate(), and the to_dict/from_dict protocol."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.criteria import MATCH_TYPES, Criteria, string_match
from assay.models import LLM, ScriptedProvider
from assay.models.cache import ResponseCache
from tests.metrics.rag.scripted import judge

DATE_PATTERN = r"\d{1,2}/\d{1,2}/\d{4}|\d{4}-\d{2}-\d{2}"
EVENT = "The event occurred on 12/25/2023"
QUESTION = "What is the capital of France?"
ANSWER = "The capital of France is Paris."
CONTEXTS = ["Paris is the capital and largest city of France.", "Lyon is known for its cuisine."]


def relevance(**overrides) -> Criteria:
    return Criteria(
        **{
            "name": "Relevance",
            "phase": "generation",
            "output_type": "5-point",
            "criteria_type": "llm_judge",
            "header": "How relevant is the response to the question?",
            "likert_score_1": "Not relevant at all",
            "likert_score_2": "Slightly relevant",
            "likert_score_3": "Moderately relevant",
            "likert_score_4": "Very relevant",
            "likert_score_5": "Completely relevant",
            **overrides,
        }
    )


def factual(**overrides) -> Criteria:
    return Criteria(
        **{
            "name": "Factually Correct",
            "phase": "generation",
            "output_type": "bool",
            "criteria_type": "llm_judge",
            "header": "Is the response factually correct based on the provided context?",
            "bool_true": "Yes, the response is factually correct and consistent with the context",
            "bool_false": "No, the response contains factual errors or contradicts the context",
            **overrides,
        }
    )


def reasoning(**overrides) -> Criteria:
    return Criteria(
        **{
            "name": "Reasoning Quality",
            "phase": "generation",
            "output_type": "prompt",
            "criteria_type": "llm_judge",
            "description": "Evaluate the quality of reasoning in the response",
            "prompt": "On a scale of 1-10, rate the quality of reasoning in the response. First explain "
            "your reasoning, then provide a final score between 1-10.",
            **overrides,
        }
    )


def contains_date(**overrides) -> Criteria:
    return Criteria(
        **{
            "name": "Contains Date",
            "phase": "generation",
            "output_type": "bool",
            "criteria_type": "function",
            "function_name": "string_match",
            "match_type": "regex_match",
            "match_pattern": DATE_PATTERN,
            "test_string": EVENT,
            "case_sensitive": False,
            **overrides,
        }
    )


def test_five_point_scale():
    llm, provider = judge(json.dumps({"feedback": "Directly answers the question.", "score": 4}))
    result = relevance(llm=llm).score(user_input=QUESTION, response=ANSWER)
    assert result.value == 4 and result.reason == "Directly answers the question."
    body = provider.requests[0].messages[-1].content
    rubric = body.split("<rubric>\n")[1].split("\n</rubric>")[0]
    assert rubric.splitlines() == [
        "How relevant is the response to the question?",
        "score1_description: Not relevant at all",
        "score2_description: Slightly relevant",
        "score3_description: Moderately relevant",
        "score4_description: Very relevant",
        "score5_description: Completely relevant",
    ]
    assert (
        f"<question>\n{QUESTION}\n</question>" in body
        and f"<response>\n{ANSWER}\n</response>" in body
    )


@pytest.mark.parametrize("score", [0, 6])
def test_five_point_out_of_scale_is_an_error(score):
    llm, _ = judge(json.dumps({"feedback": "f", "score": score}))
    with pytest.raises(OutputParseError):
        relevance(llm=llm).score(response=ANSWER)
    llm, _ = judge(json.dumps({"feedback": "f", "score": score}))
    outcome = evaluate([{"response": ANSWER}], [relevance()], llm=llm, show_progress=False).outcome(
        0, "Relevance"
    )
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"


def test_bool():
    llm, provider = judge("yes")
    result = factual(llm=llm).score(
        user_input=QUESTION, response=ANSWER, retrieved_contexts=CONTEXTS
    )
    assert result.value == 1.0 and result.reason == "judged yes"
    body = provider.requests[0].messages[-1].content
    criterion = body.split("<criterion>\n")[1].split("\n</criterion>")[0]
    assert criterion == (
        "Is the response factually correct based on the provided context?\n"
        "yes means: Yes, the response is factually correct and consistent with the context\n"
        "no means: No, the response contains factual errors or contradicts the context"
    )
    assert f"<contexts>\n[1] {CONTEXTS[0]}\n[2] {CONTEXTS[1]}\n</contexts>" in body
    llm, _ = judge("no")
    assert factual(llm=llm).score(response="The capital of France is Lyon.").value == 0.0


def test_prompt_score_is_parsed():
    llm, provider = judge(
        json.dumps({"reason": "Logical, uses evidence, no fallacies.", "score": 8})
    )
    result = reasoning(llm=llm).score(response="Since A implies B and A holds, B holds.")
    assert result.value == 8 and result.reason == "Logical, uses evidence, no fallacies."
    criterion = (
        provider.requests[0]
        .messages[-1]
        .content.split("<criterion>\n")[1]
        .split("\n</criterion>")[0]
    )
    assert criterion.startswith(
        "Evaluate the quality of reasoning in the response\nOn a scale of 1-10"
    )


def test_prompt_answer_in_the_format_the_prompt_asks_for():
    """The simple_criteria prompt tells the judge to reply {"reason": "...", "score": <number>}; a judge that
    does exactly that must be scored (8), in one request, not rejected for lacking a "reasoning" key."""
    llm, provider = judge(
        json.dumps({"reason": "Logical and well supported.", "score": 8}),
        json.dumps({"reason": "Logical and well supported.", "score": 8}),
    )
    criteria = reasoning(llm=llm)
    instruction = criteria.judge_prompt("simple_criteria").instruction
    assert '{"reason": "...", "score": <number>}' in instruction
    result = criteria.score(response="Since A implies B and A holds, B holds.")
    assert result.value == 8
    assert len(provider.requests) == 1


def test_spec_date_regex():
    criteria = contains_date()
    assert criteria.score(response=criteria.test_string).value == 1.0
    assert criteria.score(response="It happened on 2023-12-25.").value == 1.0
    assert criteria.score(response="It happened last Christmas.").value == 0.0
    result = criteria.score(response=EVENT)
    assert "regex_match" in result.reason and "matched" in result.reason


@pytest.mark.parametrize(
    ("match_type", "pattern", "insensitive", "sensitive"),
    [
        ("starts_with", "the event", True, False),
        ("starts_with", "The event", True, True),
        ("starts_with", "event", False, False),
        ("ends_with", "12/25/2023", True, True),
        ("ends_with", "OCCURRED", False, False),
        ("contains", "OCCURRED ON", True, False),
        ("contains", "occurred on", True, True),
        ("contains", "happened", False, False),
        ("regex_match", r"EVENT\s+occurred", True, False),
        ("regex_match", r"^The event", True, True),
        ("regex_match", r"\d{5}", False, False),
    ],
)
def test_string_match_types_and_case(match_type, pattern, insensitive, sensitive):
    assert string_match(EVENT, match_type, pattern) is insensitive
    assert string_match(EVENT, match_type, pattern, case_sensitive=True) is sensitive
    for case_sensitive, expected in ((False, insensitive), (True, sensitive)):
        criteria = contains_date(
            name="m", match_type=match_type, match_pattern=pattern, case_sensitive=case_sensitive
        )
        assert criteria.score(response=EVENT).value == float(expected)


def test_function_criteria_make_no_model_call(monkeypatch):
    def no_default_llm(*args, **kwargs):
        raise AssertionError("a function criterion must not build a judge")

    monkeypatch.setattr("assay.engine.run.default_llm", no_default_llm)
    result = evaluate(
        [{"response": EVENT}, {"response": "no date"}], [contains_date()], show_progress=False
    )
    assert result["Contains Date"] == [1.0, 0.0]
    assert contains_date().needs_llm is False and factual().needs_llm is True


def test_retrieval_phase_judges_the_contexts():
    llm, provider = judge("yes")
    criteria = factual(name="Context Support", phase="retrieval", llm=llm)
    assert criteria.required_fields == ("retrieved_contexts",)
    assert (
        criteria.score(
            user_input=QUESTION, response="SECRET RESPONSE TEXT", retrieved_contexts=CONTEXTS
        ).value
        == 1.0
    )
    body = provider.requests[0].messages[-1].content
    judged = body.split("<response>\n")[1].split("\n</response>")[0]
    assert judged == f"{CONTEXTS[0]}\n\n{CONTEXTS[1]}"
    assert "SECRET RESPONSE TEXT" not in body
    matcher = contains_date(
        name="Mentions Lyon", phase="retrieval", match_type="contains", match_pattern="lyon"
    )
    assert matcher.score(retrieved_contexts=CONTEXTS).value == 1.0
    assert (
        matcher.score(retrieved_contexts=CONTEXTS[:1], response="Lyon").value == 0.0
    )  # the response is not judged


def test_rows_without_the_judged_phase_are_skipped():
    llm, provider = judge("yes", repeat_last=True)
    rows = [
        {"user_input": QUESTION, "response": ANSWER},
        {"user_input": QUESTION, "response": "   ", "retrieved_contexts": CONTEXTS},
    ]
    result = evaluate(
        rows,
        [factual(), factual(name="Context Support", phase="retrieval")],
        llm=llm,
        show_progress=False,
        max_concurrency=1,
    )
    assert result.outcome(0, "Factually Correct").value == 1.0
    assert (
        result.outcome(1, "Factually Correct").status == "skipped"
    )  # a blank response: nothing to judge
    assert result.outcome(0, "Context Support").status == "skipped"  # no contexts in that row
    assert result.outcome(1, "Context Support").value == 1.0
    assert len(provider.requests) == 2


@pytest.mark.parametrize(
    "config",
    [
        {"phase": "both"},
        {"phase": "Generation"},
        {"match_type": "fuzzy"},
        {"match_type": ""},
        {"match_pattern": "(unclosed"},
        {"match_pattern": "[a-"},
        {"function_name": "levenshtein"},
        {"criteria_type": "heuristic"},
        {"name": ""},
    ],
)
def test_invalid_function_configs(config):
    with pytest.raises(UsageError):
        contains_date(**config)


@pytest.mark.parametrize("output_type", ["", "10-point", "Bool"])
def test_invalid_judge_output_types(output_type):
    with pytest.raises(UsageError):
        factual(output_type=output_type)
    with pytest.raises(UsageError):
        string_match("text", "fuzzy", "t")
    assert set(MATCH_TYPES) == {"starts_with", "ends_with", "contains", "regex_match"}


def test_criteria_directly_in_evaluate():
    def route(request):
        if request.output is not None:
            return json.dumps({"feedback": "on point", "score": 5})
        return "yes"

    llm, provider = judge(route, route, route, route)
    rows = [
        {"user_input": QUESTION, "response": ANSWER, "retrieved_contexts": CONTEXTS},
        {"user_input": "When was it?", "response": EVENT, "retrieved_contexts": CONTEXTS},
    ]
    result = evaluate(rows, [relevance(), factual(), contains_date()], llm=llm, show_progress=False)
    assert result["Relevance"] == [5, 5]
    assert result["Factually Correct"] == [1.0, 1.0]
    assert result["Contains Date"] == [0.0, 1.0]
    assert len(provider.requests) == 4
    spec = next(s for s in result.metric_specs if s["name"] == "Contains Date")
    assert spec["criteria"]["match_pattern"] == DATE_PATTERN and spec["class"] == "Criteria"


def test_criteria_in_evaluate_with_a_cached_judge(tmp_path):
    """`llm_factory` caches by default. A Criteria judged by such an LLM must evaluate like any other
    metric: describing the run (`spec()`) must not try to deep-copy the judge and its SQLite cache."""
    provider = ScriptedProvider(["yes"])
    llm = LLM(provider, cache=ResponseCache(tmp_path / "cache.sqlite"))
    criteria = factual(llm=llm)
    assert "llm" in criteria.spec() and "criteria" in criteria.spec()
    result = evaluate([{"response": ANSWER}], [criteria], show_progress=False)
    assert result["Factually Correct"] == [1.0]
    assert len(provider.requests) == 1


def test_to_dict_from_dict_round_trip():
    for criteria in (relevance(), factual(), reasoning(), contains_date(case_sensitive=True)):
        data = criteria.to_dict()
        assert data["object_type"] == "criteria" and data["name"] == criteria.name
        assert "llm" not in data
        json.dumps(data)  # API-ready
        again = Criteria.from_dict(data)
        assert again.to_dict() == data
        assert again.required_fields == criteria.required_fields
    data = contains_date().to_dict()
    assert data["match_pattern"] == DATE_PATTERN and data["test_string"] == EVENT
    # keys the API adds (ids, timestamps) are ignored
    assert Criteria.from_dict({**data, "id": 42, "created_at": "2024-01-01"}).to_dict() == data
    with pytest.raises(UsageError):
        Criteria.from_dict({**data, "match_type": "fuzzy"})
