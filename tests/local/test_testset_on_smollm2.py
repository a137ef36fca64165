"""Test-set generation on the real local path (SmolLM2, local MiniLM embeddings): plumbing only.

A 135M model writes poor questions and may fail the gate; what this pins is that the generator
runs end to end on the embedded llama.cpp server and the offline embeddings, that every candidate
ends as a kept sample, a rejection with its reason or a recorded failure, and that the report's
call counts are those of the local models (no cost)."""

from __future__ import annotations

import pytest

from assay.models.defaults import default_embeddings
from assay.testset import Persona, TestsetGenerator
from assay.testset.synthesizers import SingleHopSpecificQuerySynthesizer
from tests.local.conftest import make_llm, needs_smollm2
from tests.testset.corpus import FOUNDRY, KETTLES


@pytest.mark.slow  # ~30 s of SmolLM2; test_metrics_on_smollm2 keeps the local path by default
@needs_smollm2
def test_a_small_test_set_is_generated_on_the_local_models():
    llm = make_llm(max_tokens=160)
    # The fewest calls that still cross every stage: a given persona (no persona calls), one
    # synthesizer, one sample and at most three candidates for the gate.
    generator = TestsetGenerator(
        llm=llm,
        embedding_model=default_embeddings(),
        persona_list=[Persona(name="Owner", role_description="owns a brass kettle")],
    )

    testset = generator.generate_with_documents(
        [KETTLES, FOUNDRY],
        testset_size=1,
        query_distribution=[(SingleHopSpecificQuerySynthesizer(), 1.0)],
        max_candidates=3,
        seed=3,
    )

    report = testset.report
    assert report.requested == 1
    assert len(testset) == report.produced <= 1
    assert report.candidates_tried <= 3
    if report.produced < 1:
        assert report.shortfall == 1 and report.shortfall_reasons
    for sample in testset:
        assert sample.eval_sample.user_input.strip()
        assert sample.provenance.chunk_ids
    for rejected in report.rejected:
        assert rejected.reason  # each refusal or failure says why
    assert sum(report.calls.values()) > 0  # the local models were really asked
    assert testset.total_cost(cost_per_input_token=0.0, cost_per_output_token=0.0) == 0.0
