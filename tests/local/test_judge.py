"""The local judge as an OpenAI-compatible provider: structured output, logprobs, concurrency,
truncation and usage. Plumbing only: SmolLM2-135M is far too small for its answers to mean anything."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from assay.errors import OutputTruncated
from assay.models.llm import LLM
from assay.models.local import LocalProvider
from tests.local.conftest import PARALLEL, Recorder, make_llm, needs_smollm2

pytestmark = needs_smollm2


class YesNo(BaseModel):
    answer: Literal["yes", "no"]


class Rating(BaseModel):
    score: int = Field(
        ge=7, le=9
    )  # a range the model would not pick unprompted: the grammar must hold it
    label: Literal["low", "high"]


class Essay(BaseModel):
    first_reason_for_the_verdict: str = Field(min_length=40)
    second_reason_for_the_verdict: str = Field(min_length=40)
    verdict: int


@pytest.fixture(scope="module")
def judge() -> Iterator[LLM]:
    """One local LLM for the module; its server starts on the first call and is reused."""
    yield make_llm()


def test_the_local_factory_builds_a_local_provider_with_one_slot_per_request(judge: LLM) -> None:
    assert isinstance(judge.provider, LocalProvider)
    assert judge.provider.settings.n_parallel == PARALLEL
    assert judge.limiter.concurrency.ceiling == PARALLEL
    assert judge.limiter.concurrency.limit == PARALLEL
    assert judge.limiter.limits.adaptive is False
    assert judge.provider.profile.output_modes[0] == "json_schema"
    assert judge.provider.profile.logprobs


def test_a_literal_schema_is_answered_in_json_schema_mode_without_repair() -> None:
    llm = make_llm()
    recorder = Recorder(llm)
    response = llm.generate("Is water wet? Answer yes or no.", schema=YesNo, max_tokens=32)
    assert isinstance(response.parsed, YesNo)
    assert response.parsed.answer in ("yes", "no")
    # One request, in the best mode, and the raw text already validates: the server's grammar
    # enforced the schema (no repair round trip was needed).
    assert len(recorder.requests) == 1
    first = recorder.requests[0]
    assert first.output is not None and first.output.mode == "json_schema"
    assert first.output.schema == YesNo.model_json_schema()
    assert llm._mode == "json_schema"
    assert YesNo.model_validate(json.loads(response.text)) == response.parsed


def test_integer_bounds_in_the_schema_are_enforced_by_the_server(judge: LLM) -> None:
    recorder = Recorder(judge)
    response = judge.generate("Rate pizza from 1 to 5 and label it.", schema=Rating, max_tokens=48)
    assert isinstance(response.parsed, Rating)
    assert 7 <= response.parsed.score <= 9
    assert len(recorder.requests) == 1, (
        "the raw answer needed a repair: the bounds did not reach the grammar"
    )
    assert Rating.model_validate(json.loads(response.text)) == response.parsed
    assert judge._mode == "json_schema"


def test_one_token_with_logprobs_returns_the_top_alternatives(judge: LLM) -> None:
    response = judge.generate(
        "Is the sky blue? Answer yes or no.",
        max_tokens=1,
        logprobs=True,
        top_logprobs=5,
        allow_truncated=True,
    )
    generation = response.generations[0]
    assert generation.finish_reason == "length"
    assert generation.logprobs is not None and len(generation.logprobs) == 1
    token = generation.logprobs[0]
    assert 3 <= len(token.top) <= 5
    assert all(math.isfinite(value) and value <= 0.0 for value in token.top.values())
    total = sum(math.exp(value) for value in token.top.values())
    assert 0.0 < total <= 1.0 + 1e-6
    # temperature 0 (the default): the token produced is the most likely one
    assert token.logprob == pytest.approx(max(token.top.values()), abs=1e-4)
    assert generation.text == token.token


def test_concurrent_requests_all_succeed_within_the_server_slots(judge: LLM) -> None:
    recorder = Recorder(judge)

    async def burst() -> list:
        return await asyncio.gather(
            *(
                judge.agenerate(f"Name a colour number {i}.", max_tokens=6, allow_truncated=True)
                for i in range(6)
            )
        )

    responses = asyncio.run(burst())
    assert len(responses) == 6
    assert all(r.generations[0].finish_reason in ("stop", "length") for r in responses)
    assert all(r.usage.output_tokens > 0 for r in responses)
    assert len(recorder.requests) == 6
    assert recorder.max_in_flight == PARALLEL  # the limiter let exactly n_parallel through at once
    assert recorder.max_limiter_in_flight <= PARALLEL
    assert judge.limiter.concurrency.in_flight == 0


def test_an_answer_cut_off_by_max_tokens_is_a_typed_error_not_a_parse() -> None:
    llm = make_llm()
    recorder = Recorder(llm)
    with pytest.raises(OutputTruncated) as caught:
        llm.generate("Explain your verdict.", schema=Essay, max_tokens=2)
    # the budget was doubled twice (2, 4, 8) before giving up, never parsed or repaired
    assert [r.params["max_tokens"] for r in recorder.requests] == [2, 4, 8]
    assert all(r.output is not None and r.output.mode == "json_schema" for r in recorder.requests)
    assert caught.value.raw is not None


def test_usage_is_counted_and_free() -> None:
    llm = make_llm()
    response = llm.generate("Say hello.", max_tokens=4, allow_truncated=True)
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    assert response.usage.requests == 1
    assert response.usage.cost == 0.0
    assert llm.usage.usage.requests == 1
    assert llm.usage.usage.input_tokens == response.usage.input_tokens
    assert llm.usage.usage.output_tokens == response.usage.output_tokens
    assert llm.usage.usage.cost == 0.0


def test_the_local_judge_is_not_reported_as_an_unpriced_model() -> None:
    # The embedded judge costs nothing, and that price is known. Counting its requests as
    # "unpriced" makes every offline run's summary end in
    # "cost $0.0000 (+N requests to models with no known price)" (engine/progress.py).
    llm = make_llm()
    llm.generate("Say hello.", max_tokens=2, allow_truncated=True)
    assert llm.usage.usage.unpriced_requests == 0
