"""Fixtures of the model-layer tests: a fault-injecting OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assay.models import RetryPolicy, llm_factory
from assay.models.llm import LLM
from tests.models.fake_openai import FakeOpenAI, serve

FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait=0.01, max_wait=0.5)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


@pytest.fixture
def make_llm(server: FakeOpenAI, tmp_path):
    """Build an LLM against the fake server; `cache=False` by default, fast retries."""

    def build(
        *,
        cache: Any = False,
        retry: RetryPolicy | None = None,
        model: str = "test-model",
        **options: Any,
    ) -> LLM:
        return llm_factory(
            server.model_string(model), cache=cache, retry=retry or FAST_RETRY, **options
        )

    return build
