"""Failures and resume: failed calls are retried, then skipped and recorded; the graph and every
decided candidate are checkpointed, so a rerun continues without paying again."""

from __future__ import annotations

import pytest

from assay.errors import CheckpointMismatch, ProviderError
from tests.metrics.loopback import fenced
from tests.testset.corpus import CORPUS
from tests.testset.fake_model import Writer, fail_on
from tests.testset.helpers import generator, prompt_requests, single_hop_only


def _writer(fake, **knobs) -> Writer:
    writer = Writer(**knobs)
    fake.server.default = writer
    fake.writer = writer
    return writer


def test_a_failing_call_is_retried_then_skipped_and_replaced(fake) -> None:
    _writer(fake, fail=fail_on("testset.single_hop", lambda r: "Tomatoes" in fenced(r, "context")))
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only()
    )
    assert len(testset) == 3
    failed = [r for r in testset.report.rejected if r.kind == "failed"]
    assert failed and all(r.reason.startswith("failed: ") and "500" in r.reason for r in failed)
    garden = [
        r for r in prompt_requests(fake, "testset.single_hop") if "Tomatoes" in fenced(r, "context")
    ]
    assert len(garden) == 2 * len(
        failed
    )  # each failed candidate was tried twice (the retry policy)
    assert all("Tomatoes" not in s.eval_sample.reference_contexts[0] for s in testset)


def test_failed_personas_fall_back_and_are_reported(fake) -> None:
    _writer(fake, fail=fail_on("testset.persona", lambda r: True))
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only()
    )
    assert len(testset) == 2
    assert {s.eval_sample.persona_name for s in testset} == {"Curious reader"}
    assert any("neutral built-in persona" in note for note in testset.report.notes)
    assert len([f for f in testset.report.failures if f["stage"] == "personas"]) == 3


def test_a_rerun_replays_the_checkpoint_without_calling_a_model(fake, tmp_path) -> None:
    first = generator(fake).generate_with_documents(CORPUS, testset_size=4, checkpoint_dir=tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {
        "graph.json",
        "graph.meta.json",
        "personas.json",
        "run.json",
        "candidates.jsonl",
    }
    chat, embedded = fake.chat_count, len(fake.server.embedding_requests)
    again = generator(fake).generate_with_documents(CORPUS, testset_size=4, checkpoint_dir=tmp_path)
    assert fake.chat_count == chat and len(fake.server.embedding_requests) == embedded
    assert again.to_list() == first.to_list()
    assert again.report.resumed_samples == 4
    assert "knowledge graph loaded from the checkpoint (no transform re-run)" in again.report.notes


def test_a_crashed_run_continues_where_it_stopped(fake, tmp_path) -> None:
    misquote = lambda term, context: "Tomatoes" in context  # noqa: E731 (a refusal forces a second wave)
    state = {"crash": False}

    def crash_after_first_wave(request, prompt):
        return fail_on("testset.single_hop", lambda r: state["crash"])(request, prompt)

    def progress(stage, done, total):
        if stage == "samples" and done >= 2:
            state["crash"] = True

    _writer(fake, misquote=misquote, fail=crash_after_first_wave)
    with pytest.raises(ProviderError):
        generator(fake).generate_with_documents(
            CORPUS,
            testset_size=3,
            query_distribution=single_hop_only(),
            checkpoint_dir=tmp_path / "run",
            raise_exceptions=True,
            on_progress=progress,
        )
    decided = (tmp_path / "run" / "candidates.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(decided) == 3  # two kept and one refused before the crash
    _writer(fake, misquote=misquote)
    before_writes = len(prompt_requests(fake, "testset.single_hop"))
    resumed = generator(fake).generate_with_documents(
        CORPUS,
        testset_size=3,
        query_distribution=single_hop_only(),
        checkpoint_dir=tmp_path / "run",
    )
    resumed_writes = len(prompt_requests(fake, "testset.single_hop")[before_writes:])
    assert len(resumed) == 3 and resumed.report.resumed_samples == 2
    _writer(fake, misquote=misquote)
    before_fresh = len(prompt_requests(fake, "testset.single_hop"))
    uninterrupted = generator(fake).generate_with_documents(
        CORPUS,
        testset_size=3,
        query_distribution=single_hop_only(),
        checkpoint_dir=tmp_path / "fresh",
    )
    fresh_writes = len(prompt_requests(fake, "testset.single_hop")) - before_fresh
    assert resumed.to_list() == uninterrupted.to_list()
    # the three candidates decided before the crash were not written again
    assert resumed_writes == fresh_writes - 3


def test_a_torn_last_line_is_decided_again(fake, tmp_path) -> None:
    generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    path = tmp_path / "candidates.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + lines[1][: len(lines[1]) // 2], encoding="utf-8")  # crash mid-write
    before = fake.chat_count
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert len(testset) == 2 and testset.report.resumed_samples == 1
    assert fake.chat_count - before == 3
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_a_checkpoint_of_other_settings_is_refused(fake, tmp_path) -> None:
    generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    with pytest.raises(CheckpointMismatch, match="size differ"):
        generator(fake).generate_with_documents(
            CORPUS, testset_size=3, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
        )
    with pytest.raises(CheckpointMismatch, match="built from other documents"):
        generator(fake).generate_with_documents(CORPUS[:2], testset_size=2, checkpoint_dir=tmp_path)


def test_a_checkpoint_made_with_another_writer_is_refused(fake, tmp_path) -> None:
    from assay.models import llm_factory
    from assay.testset import TestsetGenerator

    generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    other = llm_factory(fake.server.model_string("another-writer"), cache=False)
    with pytest.raises(CheckpointMismatch, match="critic, writers differ"):
        TestsetGenerator(llm=other, embedding_model=fake.embeddings()).generate_with_documents(
            CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
        )


def test_a_rerun_applies_the_current_gate_to_drafts_already_paid_for(fake, tmp_path) -> None:
    from assay.testset import QualityGate

    def writer_calls() -> int:
        return len(prompt_requests(fake, "testset.single_hop"))

    strict = QualityGate(llm=fake.llm(), min_question_tokens=1000)  # every draft fails, cheaply
    first = generator(fake, gate=strict).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert len(first) == 0
    assert {r.reason for r in first.report.rejected} == {
        "empty: no question or no reference answer"
    }
    drafted = writer_calls()
    assert drafted > 0
    again = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    # the default gate keeps drafts the strict one refused: no draft is written twice, only
    # the judge checks the strict gate never reached are asked
    assert len(again) == 2 and again.report.resumed_samples == 2
    assert writer_calls() == drafted
    before = fake.chat_count
    third = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert fake.chat_count == before  # the re-gated verdicts were checkpointed
    assert [s.eval_sample.user_input for s in third] == [s.eval_sample.user_input for s in again]


def test_a_rerun_with_other_judge_thresholds_judges_again(fake, tmp_path) -> None:
    from assay.prompts.prompt import load_prompt
    from assay.testset import QualityGate

    def judge_calls() -> int:
        return len(prompt_requests(fake, "supported"))

    first = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    kept = first.samples[0].provenance.gate
    assert kept["judged_with"] == {
        "support_scoring": "verdicts",
        "support_threshold": 1.0,
        "answer_threshold": 0.5,
        "each_hop_needed": True,
        "prompts": {
            "supported": load_prompt("supported").hash,
            "answers_question": load_prompt("answers_question").hash,
        },
    }
    before = judge_calls()
    same = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert judge_calls() == before and same.report.resumed_samples == 2
    # an impossible support threshold: the old verdicts "passed" must not be trusted
    strict = QualityGate(llm=fake.llm(), support_threshold=1.0, answer_threshold=1.0)
    fake.writer.unsupported_words = {"Tomatoes", "tomatoes"}
    again = generator(fake, gate=strict).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert judge_calls() > before
    assert all(s.provenance.gate["judged_with"]["support_threshold"] == 1.0 for s in again)


def test_a_checkpoint_written_with_another_prompt_is_refused(fake, tmp_path) -> None:
    import json

    generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    run = tmp_path / "run.json"
    saved = json.loads(run.read_text(encoding="utf-8"))
    assert set(saved["prompts"]) == {"single_hop_specific_query_synthesizer"}
    saved["prompts"]["single_hop_specific_query_synthesizer"] = "0123456789ab"  # older wording
    run.write_text(json.dumps(saved), encoding="utf-8")
    with pytest.raises(CheckpointMismatch, match="prompts differ"):
        generator(fake).generate_with_documents(
            CORPUS, testset_size=2, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
        )
