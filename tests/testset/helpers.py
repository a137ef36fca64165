"""Building generators against the fake server."""

from __future__ import annotations

from typing import Any

from assay.testset import TestsetGenerator
from assay.testset.synthesizers import SingleHopSpecificQuerySynthesizer


def generator(fake: Any, **options: Any) -> TestsetGenerator:
    return TestsetGenerator(llm=fake.llm(), embedding_model=fake.embeddings(), **options)


def single_hop_only() -> list:
    return [(SingleHopSpecificQuerySynthesizer(), 1.0)]


def prompt_requests(fake: Any, prompt_id: str) -> list:
    from tests.testset.fake_model import prompt_of

    return [r for r in fake.server.chat_requests if prompt_of(r) == prompt_id]
