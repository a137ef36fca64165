"""Ragas' prompt attributes on metrics (`nli_statement_prompt`, ...): read, edited in place or
replaced, and then what the judge is really sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay import AnswerRelevancy, FactualCorrectness, Faithfulness, NoiseSensitivity
from assay.compat.ragas.prompt_classes import (
    ClaimDecompositionPrompt,
    NLIStatementPrompt,
    StatementGeneratorPrompt,
)
from assay.errors import UsageError
from assay.prompts.prompt import load_prompt
from tests.metrics.loopback import Loopback, loopback, verdict_lines
from tests.models.fake_openai import ok

ROW = {
    "user_input": "Where was Marie Curie born?",
    "response": "Marie Curie was born in Warsaw. She won two Nobel Prizes.",
    "retrieved_contexts": ["Marie Curie, born in Warsaw, won the Nobel Prize twice."],
}
STRICT = "Be strict: a statement is supported only if the source says it in so many words."


@pytest.fixture
def loop() -> Iterator[Loopback]:
    yield from loopback()


def test_the_attributes_are_typed_views_of_the_prompts_the_metric_sends():
    faithfulness = Faithfulness()
    assert isinstance(faithfulness.nli_statement_prompt, NLIStatementPrompt)
    assert isinstance(faithfulness.statement_generator_prompt, StatementGeneratorPrompt)
    assert faithfulness.nli_statement_prompt is faithfulness.nli_statement_prompt  # one object
    assert faithfulness.judge_prompt("supported") == load_prompt(
        "supported", "english"
    )  # read only
    assert isinstance(FactualCorrectness().prompt, ClaimDecompositionPrompt)
    assert isinstance(NoiseSensitivity().faithfulness_prompt, NLIStatementPrompt)
    assert AnswerRelevancy().prompt.id == "rating_answer_completeness"
    assert AnswerRelevancy(method="verdict").prompt.id == "answers_question"
    assert AnswerRelevancy(method="questions").prompt.id == "answer_relevancy"


def test_an_instruction_edited_in_place_is_what_the_judge_receives(loop):
    loop.server.default = ok(verdict_lines("yes", "no"))  # any prompt: the instruction is new
    metric = Faithfulness(llm=loop.llm())
    metric.nli_statement_prompt.instruction = STRICT

    outcome, _ = loop.run(metric, ROW)

    assert outcome.value == pytest.approx(0.5)
    [request] = loop.chat
    system_and_user = " ".join(
        m["content"] for m in request.messages if isinstance(m["content"], str)
    )
    assert STRICT in system_and_user
    assert '"1. yes"' in system_and_user or "1. yes" in system_and_user  # the answer format stays
    assert Faithfulness().judge_prompt("supported").instruction != STRICT  # other metrics untouched


def test_an_assigned_prompt_replaces_it_and_the_wrong_kind_is_refused(loop):
    loop.server.default = ok(verdict_lines("yes", "yes"))
    replacement = NLIStatementPrompt()
    replacement.instruction = STRICT
    metric = Faithfulness(llm=loop.llm())
    metric.nli_statement_prompt = replacement

    outcome, _ = loop.run(metric, ROW)

    assert outcome.value == 1.0
    assert STRICT in loop.chat[0].last_user_text or any(
        STRICT in str(m["content"]) for m in loop.chat[0].messages
    )
    assert metric.spec()["prompts"] != Faithfulness().spec()["prompts"]  # results say so
    with pytest.raises(UsageError, match="takes a NLIStatementPrompt"):
        metric.nli_statement_prompt = ClaimDecompositionPrompt()
    with pytest.raises(UsageError, match="takes a PydanticPrompt or an assay Prompt"):
        metric.nli_statement_prompt = "judge strictly"
