"""Fixtures: the loopback fake OpenAI server with the writer-judge, models built against it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from assay.models import RetryPolicy, embedding_factory, llm_factory
from tests.models.fake_openai import FakeOpenAI, serve
from tests.testset.fake_model import BagOfWords, Writer

FAST_RETRY = RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05)


@dataclass
class Fake:
    server: FakeOpenAI
    writer: Writer
    vectors: BagOfWords

    def llm(self):
        return llm_factory(self.server.model_string("writer"), cache=False, retry=FAST_RETRY)

    def embeddings(self):
        return embedding_factory(f"vllm/bow@{self.server.url}", cache=False, retry=FAST_RETRY)

    @property
    def chat_count(self) -> int:
        return len(self.server.chat_requests)


@pytest.fixture
def fake() -> Iterator[Fake]:
    for server in serve():
        writer, vectors = Writer(), BagOfWords()
        server.default = writer
        server.embedding_default = vectors
        yield Fake(server, writer, vectors)
        assert writer.unexpected == [], "requests the fake did not recognise"
