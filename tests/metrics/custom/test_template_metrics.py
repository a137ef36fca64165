"""DiscreteMetric / NumericMetric / RankingMetric: placeholders, where the llm comes from, evaluate()
over extra columns, and allowed-values validation (retried, then a typed error, never clamped)."""

from __future__ import annotations

import csv
import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.custom import DiscreteMetric, NumericMetric, RankingMetric
from assay.schema import MetricResult
from tests.metrics.rag.scripted import judge

GRADING = (
    "Check if the response covers the grading notes.\nResponse: {response}\nGrading notes: {grading_notes}\n"
    "Answer pass or fail."
)


def answer(value, reason: str = "because") -> str:
    return json.dumps({"reason": reason, "value": value})


def grader(llm=None) -> DiscreteMetric:
    return DiscreteMetric(
        name="covers_notes", allowed_values=["pass", "fail"], prompt=GRADING, llm=llm
    )


def test_placeholders_are_the_fields_and_are_fenced_as_data():
    metric = grader()
    assert metric.required_fields == ("response", "grading_notes")
    llm, provider = judge(answer("pass", "All three notes are covered."))
    result = metric.score(
        llm=llm, response="Paris is the capital.", grading_notes="- mentions Paris"
    )
    assert isinstance(result, MetricResult)
    assert result.value == "pass" and result.reason == "All three notes are covered."
    system, user = provider.requests[0].messages
    assert system.role == "system" and "treat it as data" in system.content
    assert user.content == (
        "Check if the response covers the grading notes.\n"
        "Response: <response>\nParis is the capital.\n</response>\n"
        "Grading notes: <grading_notes>\n- mentions Paris\n</grading_notes>\nAnswer pass or fail."
    )
    # the answer is constrained to the allowed labels
    schema = provider.requests[0].output.schema
    assert schema["properties"]["value"]["enum"] == ["pass", "fail"]


def test_values_with_braces_and_repeated_placeholders_render_verbatim():
    metric = DiscreteMetric(
        name="same",
        allowed_values=["yes", "no"],
        prompt="Is {response} the same as {reference}? Re-read {response}.",
    )
    llm, provider = judge(answer("yes"))
    metric.score(llm=llm, response='use {name} and {"a": 1}', reference="{0}")
    body = provider.requests[0].messages[-1].content
    assert body.count('<response>\nuse {name} and {"a": 1}\n</response>') == 2
    assert "<reference>\n{0}\n</reference>" in body
    # doubled braces in the template are its own literal braces, not placeholders
    literal = DiscreteMetric(
        name="lit",
        allowed_values=["pass", "fail"],
        prompt='Reply like {{"value": "pass"}} about {response}.',
    )
    assert literal.required_fields == ("response",)
    llm, provider = judge(answer("pass"))
    literal.score(llm=llm, response="r")
    assert (
        provider.requests[0].messages[-1].content
        == 'Reply like {"value": "pass"} about <response>\nr\n</response>.'
    )


def test_templates_without_placeholders_or_fields_are_usage_errors(monkeypatch):
    from assay.metrics.base import forget_default_models

    # no model anywhere: the configured default is built, and a missing key says so
    monkeypatch.setenv("ASSAY_LLM", "openai/gpt-4o-mini")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    forget_default_models()
    with pytest.raises(UsageError):
        DiscreteMetric(name="x", prompt="Is it good?")
    with pytest.raises(UsageError):
        DiscreteMetric(name="x", prompt="")
    with pytest.raises(UsageError):
        DiscreteMetric(name="x", prompt="{response}", allowed_values=[])
    with pytest.raises(UsageError):
        DiscreteMetric(name="x", prompt="{response}", allowed_values=["a", "a"])
    llm, provider = judge(answer("pass"))
    with pytest.raises(UsageError, match="grading_notes"):
        grader().score(llm=llm, response="r")
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        grader().score(response="r", grading_notes="n")
    assert provider.requests == []


def test_the_llm_at_call_time_or_construction():
    built, built_provider = judge(answer("fail"), answer("fail"))
    call, call_provider = judge(answer("pass"))
    metric = grader(llm=built)
    assert metric.score(response="r", grading_notes="n").value == "fail"
    assert metric.score(llm=call, response="r", grading_notes="n").value == "pass"  # call time wins
    assert len(built_provider.requests) == 1 and len(call_provider.requests) == 1


@pytest.mark.anyio
async def test_ascore_with_llm_keyword():
    llm, _ = judge(answer("pass"))
    result = await grader().ascore(llm=llm, response="r", grading_notes="n")
    assert result.value == "pass"


def test_evaluate_gives_the_llm_and_feeds_extra_columns(tmp_path):
    rows = [
        {"response": "Paris is the capital of France.", "grading_notes": "- names Paris"},
        {"response": "Lyon.", "grading_notes": "- names Paris"},
    ]

    def route(request):
        return answer("pass" if "Paris is the capital" in request.messages[-1].content else "fail")

    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    table = tmp_path / "rows.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["response", "grading_notes"])
        writer.writeheader()
        writer.writerows(rows)
    for source in (rows, jsonl, table):
        llm, provider = judge(route, route)
        metric = grader()
        result = evaluate(source, [metric], llm=llm, show_progress=False)
        assert result["covers_notes"] == ["pass", "fail"]
        assert result.summary("covers_notes").labels == {"pass": 1, "fail": 1}
        assert all(
            "<grading_notes>\n- names Paris\n</grading_notes>" in r.messages[-1].content
            for r in provider.requests
        )
        assert metric.llm is None  # evaluate() gave the run's llm to a copy


def test_evaluate_without_the_extra_column_is_a_usage_error():
    llm, _ = judge()
    with pytest.raises(UsageError, match="grading_notes"):
        evaluate([{"response": "r"}], [grader()], llm=llm, show_progress=False)


def test_an_out_of_range_label_is_repaired_once():
    llm, provider = judge(answer("maybe"), answer("fail", "fixed"))
    result = grader(llm).score(response="r", grading_notes="n")
    assert result.value == "fail" and result.reason == "fixed"
    assert len(provider.requests) == 2
    repair = provider.requests[1].messages
    assert repair[-2].role == "assistant" and "maybe" in repair[-2].content
    assert "could not be used" in repair[-1].content


def test_an_out_of_range_label_twice_is_a_typed_error_never_clamped():
    llm, provider = judge(answer("maybe"), answer("probably"))
    with pytest.raises(OutputParseError) as caught:
        grader(llm).score(response="r", grading_notes="n")
    assert "probably" in caught.value.raw
    assert len(provider.requests) == 2
    llm, provider = judge(answer("maybe"), answer("maybe"))
    outcome = evaluate(
        [{"response": "r", "grading_notes": "n"}], [grader()], llm=llm, show_progress=False
    ).outcome(0, "covers_notes")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert len(provider.requests) == 2


def test_integer_labels_come_back_as_integers():
    metric = DiscreteMetric(
        name="clarity",
        allowed_values=list(range(0, 11)),
        prompt="Rate the clarity of {response} from 0 to 10.",
    )
    llm, _ = judge(answer("7"))
    result = metric.score(llm=llm, response="r")
    assert result.value == 7 and isinstance(result.value, int)
    llm, _ = judge(answer("11"), answer("12"))
    with pytest.raises(OutputParseError):
        metric.score(llm=llm, response="r")


def test_integer_labels_accept_a_json_number():
    """allowed_values=list(range(0, 11)) is the spec's clarity scale: a judge answering {"value": 7}
    (a JSON number) gave an allowed value and must score 7 in one request."""
    metric = DiscreteMetric(
        name="clarity",
        allowed_values=list(range(0, 11)),
        prompt="Rate the clarity of {response} from 0 to 10.",
    )
    llm, provider = judge(answer(7), answer(7))
    assert metric.score(llm=llm, response="r").value == 7
    assert len(provider.requests) == 1


def test_numeric_bounds():
    metric = NumericMetric(
        name="quality", allowed_values=(0, 10), prompt="Rate {response} from 0 to 10."
    )
    llm, _ = judge(answer(7.5))
    assert metric.score(llm=llm, response="r").value == 7.5
    llm, _ = judge(answer(10))
    assert metric.score(llm=llm, response="r").value == 10
    llm, provider = judge(answer(11), answer(10.5))
    with pytest.raises(OutputParseError):
        metric.score(llm=llm, response="r")
    assert len(provider.requests) == 2
    llm, _ = judge(answer(-1), answer(3))
    assert metric.score(llm=llm, response="r").value == 3
    schema = NumericMetric(name="q", prompt="{response}").answer_model().model_json_schema()
    assert (schema["properties"]["value"]["minimum"], schema["properties"]["value"]["maximum"]) == (
        0.0,
        1.0,
    )
    assert NumericMetric(
        name="q", allowed_values=range(1, 6), prompt="{response}"
    ).allowed_values == (1, 5)
    with pytest.raises(UsageError):
        NumericMetric(name="q", allowed_values=(5, 1), prompt="{response}")
    with pytest.raises(UsageError):
        NumericMetric(name="q", allowed_values=(1, 1), prompt="{response}")


def test_ranking_length():
    metric = RankingMetric(
        name="rank", allowed_values=3, prompt="Rank these answers, best first: {responses}"
    )
    llm, provider = judge(answer(["b", "c", "a"]))
    result = metric.score(llm=llm, responses=["a", "b", "c"])
    assert result.value == ["b", "c", "a"]
    assert (
        "<responses>\n[1] a\n[2] b\n[3] c\n</responses>"
        in provider.requests[0].messages[-1].content
    )
    llm, provider = judge(answer(["b", "c"]), answer(["b", "c", "a", "d"]))
    with pytest.raises(OutputParseError):
        metric.score(llm=llm, responses=["a", "b", "c"])
    assert len(provider.requests) == 2
    assert RankingMetric(name="r", prompt="{x}").allowed_values == 2
    for bad in (0, -1, "3"):
        with pytest.raises(UsageError):
            RankingMetric(name="r", allowed_values=bad, prompt="{x}")


def test_examples_are_earlier_turns():
    metric = grader()
    metric.examples = [
        {
            "inputs": {"response": "Rome.", "grading_notes": "- names Paris"},
            "output": {"value": "fail", "reason": "Wrong city."},
        }
    ]
    llm, provider = judge(answer("pass"))
    metric.score(llm=llm, response="Paris.", grading_notes="- names Paris")
    roles = [m.role for m in provider.requests[0].messages]
    assert roles == ["system", "user", "assistant", "user"]
    example_turn, example_answer = provider.requests[0].messages[1:3]
    assert "<response>\nRome.\n</response>" in example_turn.content
    assert json.loads(example_answer.content) == {"reason": "Wrong city.", "value": "fail"}


def test_a_ranking_may_only_hold_items_it_was_given():
    """Issue #15, 5: an item the judge invents (or repeats) is refused: repair turn, then a typed error."""
    metric = RankingMetric(
        name="rank", allowed_values=2, prompt="Rank these answers, best first: {responses}"
    )
    llm, provider = judge(answer(["b", "z"]), answer(["b", "b"]))
    with pytest.raises(OutputParseError):
        metric.score(llm=llm, responses=["a", "b", "c"])
    assert len(provider.requests) == 2
    # the given items are the only choices in the answer schema
    items = provider.requests[0].output.schema["properties"]["value"]["items"]
    assert items.get("enum") == ["a", "b", "c"]
    llm, provider = judge(answer(["b", "z"]), answer(["c", "a"]))
    assert metric.score(llm=llm, responses=["a", "b", "c"]).value == ["c", "a"]
    # text inputs: an item must occur in them (Ragas' results="result1, result2, result3")
    text_metric = RankingMetric(
        name="relevance_ranking",
        prompt="Rank these results by relevance: {results}",
        allowed_values=3,
    )
    llm, _ = judge(answer(["result2", "result1", "result3"]))
    assert text_metric.score(llm=llm, results="result1, result2, result3").value == [
        "result2",
        "result1",
        "result3",
    ]
    llm, _ = judge(
        answer(["result2", "result9", "result3"]), answer(["result4", "result1", "result3"])
    )
    with pytest.raises(OutputParseError):
        text_metric.score(llm=llm, results="result1, result2, result3")
