"""Draft budgets, cut-off drafts, and a run killed in the middle of a wave.

A draft gets `max_tokens` in proportion to its contexts and one try; a cut-off draft is a
"truncated" candidate, replaced like a failed one. Each candidate is checkpointed when it
finishes, so a run stopped mid-wave resumes without asking the finished ones again, and the
set does not depend on the order in which answers come back."""

from __future__ import annotations

import json
import re
import threading
import time
import zlib

import pytest

from assay.errors import ProviderError
from assay.testset.asking import DRAFT_MAX_TOKENS, draft_budget
from assay.testset.persona import PERSONA_MAX_TOKENS
from assay.testset.synthesizers import (
    MultiHopSpecificQuerySynthesizer,
    SingleHopSpecificQuerySynthesizer,
)
from tests.metrics.loopback import fenced
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, server_error, truncated
from tests.testset.corpus import CORPUS
from tests.testset.fake_model import JUDGE_PROMPTS, Writer, numbered_sentences, prompt_of
from tests.testset.helpers import generator, prompt_requests, single_hop_only


def _writer(fake, **knobs) -> Writer:
    writer = Writer(**knobs)
    fake.server.default = writer
    fake.writer = writer
    return writer


def _judge_requests(fake) -> list[RecordedRequest]:
    return [r for r in fake.server.chat_requests if prompt_of(r) in JUDGE_PROMPTS]


def shown_budget(request) -> int:
    """The budget of a single-hop draft: counted on the sentences the writer is shown."""
    return draft_budget(*(text for _, text in numbered_sentences(fenced(request, "context"))))


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_draft_budget_grows_with_the_contexts_and_is_bounded() -> None:
    assert draft_budget("") == 192
    short, longer = draft_budget("one two three four"), draft_budget("one two three four " * 50)
    assert short == 192 + 2 and longer == 192 + 100
    assert draft_budget("a b", "c d") == draft_budget("a b c d")
    assert draft_budget("word " * 100_000) == DRAFT_MAX_TOKENS


def test_every_draft_asks_for_the_budget_of_its_contexts(fake) -> None:
    generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only()
    )
    singles = prompt_requests(fake, "testset.single_hop")
    budgets = [r.body.get("max_tokens") for r in singles]
    # counted on the sentences the writer is shown, not on their numbers
    shown = [[text for _, text in numbered_sentences(fenced(r, "context"))] for r in singles]
    assert budgets == [draft_budget(*sentences) for sentences in shown]
    assert len(set(budgets)) > 1  # chunks of different lengths get different budgets
    generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=[(MultiHopSpecificQuerySynthesizer(), 1.0)]
    )
    multis = prompt_requests(fake, "testset.multi_hop")
    assert multis
    for request in multis:
        shown = fenced(request, "contexts")
        assert len(re.findall(r"^Context [A-Z]:$", shown, flags=re.MULTILINE)) >= 2
        sentences = [text for _, text in numbered_sentences(shown)]
        assert request.body.get("max_tokens") == draft_budget(*sentences)


def test_a_fixed_draft_budget_is_used_as_given(fake) -> None:
    generator(fake).generate_with_documents(
        CORPUS,
        testset_size=2,
        query_distribution=[(SingleHopSpecificQuerySynthesizer(draft_max_tokens=2000), 1.0)],
    )
    singles = prompt_requests(fake, "testset.single_hop")
    assert singles and {r.body.get("max_tokens") for r in singles} == {2000}
    with pytest.raises(ValueError, match="draft_max_tokens must be a positive number"):
        SingleHopSpecificQuerySynthesizer(draft_max_tokens=0)


def test_a_cut_off_draft_is_truncated_not_asked_again_and_replaced(fake, tmp_path) -> None:
    def cut_garden(request, prompt):
        if prompt == "testset.single_hop" and "Tomatoes" in fenced(request, "context"):
            return truncated(
                '{"question": "What about tomatoes, tomatoes, tomatoes', usage=(900, 300)
            )
        return None

    _writer(fake, fail=cut_garden)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert len(testset) == 3 and testset.report.shortfall == 0
    cut = [r for r in testset.report.rejected if r.reason.startswith("truncated: ")]
    assert cut and all(r.kind == "failed" and "grow_budget=False" in r.reason for r in cut)
    garden = [
        r for r in prompt_requests(fake, "testset.single_hop") if "Tomatoes" in fenced(r, "context")
    ]
    assert len(garden) == len(cut)  # one request per cut-off draft: no doubled budget
    assert all(r.body["max_tokens"] == shown_budget(r) for r in garden)
    recorded = [
        line for line in _lines(tmp_path / "candidates.jsonl") if line["status"] == "truncated"
    ]
    assert {line["candidate"] for line in recorded} == {r.candidate for r in cut}
    before = fake.chat_count
    again = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only(), checkpoint_dir=tmp_path
    )
    assert fake.chat_count == before  # the cut-off drafts are not paid for again
    assert again.to_list() == testset.to_list()
    assert [r.reason for r in again.report.rejected] == [r.reason for r in testset.report.rejected]


class _KillAfterTwoDrafts:
    """Lets the first two drafts through; holds every later draft until both of those
    candidates are in the checkpoint (draft and judges done), then fails it with HTTP 500."""

    def __init__(self, candidates_file) -> None:
        self.candidates_file = candidates_file
        self.passed: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest, prompt: str):
        if prompt != "testset.single_hop":
            return None
        with self._lock:
            if len(self.passed) < 2:
                self.passed.append((fenced(request, "term"), fenced(request, "context")))
                return None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.candidates_file.exists() and len(_lines(self.candidates_file)) >= 2:
                break
            time.sleep(0.01)
        return server_error(500)


def test_a_run_killed_mid_wave_keeps_its_finished_candidates(fake, tmp_path) -> None:
    run_dir = tmp_path / "run"
    kill = _KillAfterTwoDrafts(run_dir / "candidates.jsonl")
    _writer(fake, fail=kill)
    options = {"testset_size": 4, "query_distribution": single_hop_only(), "seed": 11}
    with pytest.raises(ProviderError):
        generator(fake).generate_with_documents(
            CORPUS, checkpoint_dir=run_dir, raise_exceptions=True, **options
        )
    finished = _lines(run_dir / "candidates.jsonl")
    assert [line["status"] for line in finished] == ["answered", "answered"]
    crash_judges = len(_judge_requests(fake))
    assert crash_judges >= 2  # both finished candidates went through the judged checks

    _writer(fake)
    writes_before, judges_before = len(prompt_requests(fake, "testset.single_hop")), crash_judges
    chat_before = fake.chat_count
    resumed = generator(fake).generate_with_documents(CORPUS, checkpoint_dir=run_dir, **options)
    rerun_writes = prompt_requests(fake, "testset.single_hop")[writes_before:]
    rerun_judges = len(_judge_requests(fake)) - judges_before
    rerun_requests = fake.server.chat_requests[chat_before:]
    asked_again = {(fenced(r, "term"), fenced(r, "context")) for r in rerun_writes}
    assert not asked_again & set(kill.passed)
    assert resumed.report.resumed_samples == 2

    _writer(fake)
    writes_before, judges_before = (
        len(prompt_requests(fake, "testset.single_hop")),
        len(_judge_requests(fake)),
    )
    uninterrupted = generator(fake).generate_with_documents(
        CORPUS, checkpoint_dir=tmp_path / "fresh", **options
    )
    fresh_writes = len(prompt_requests(fake, "testset.single_hop")) - writes_before
    fresh_judges = len(_judge_requests(fake)) - judges_before
    assert fresh_judges > 0
    assert resumed.to_list() == uninterrupted.to_list()
    assert len(rerun_writes) == fresh_writes - 2
    # The finished candidates' judges are not asked again. (Counts alone cannot show it: two
    # candidates of one chunk may send the same `supported` request, which one run shares.)
    finished_questions = {line["sample"]["user_input"] for line in finished}
    rerun_asked = [
        fenced(r, "question") for r in rerun_requests if prompt_of(r) == "answers_question"
    ]
    assert rerun_asked and not finished_questions & set(rerun_asked)
    assert 0 < rerun_judges < fresh_judges


class _Delayed(Behaviour):
    """The writer's answers, drafts held back by a delay that depends on their inputs."""

    def __init__(self, writer: Writer, reverse: bool) -> None:
        self.writer, self.reverse = writer, reverse

    def respond(self, request: RecordedRequest) -> Reply:
        reply = self.writer.respond(request)
        if prompt_of(request) == "testset.single_hop":
            rank = zlib.crc32(request.last_user_text.encode()) % 5
            reply.delay = 0.04 * ((4 - rank) if self.reverse else rank)
        return reply


def test_the_set_does_not_depend_on_the_order_answers_come_back(fake, tmp_path) -> None:
    misquote = lambda term, context: "Tomatoes" in context  # noqa: E731 (refusals, a second wave)
    results, orders = [], []
    for reverse in (False, True):
        writer = _writer(fake, misquote=misquote)
        fake.server.default = _Delayed(writer, reverse)
        directory = tmp_path / f"order-{reverse}"
        testset = generator(fake).generate_with_documents(
            CORPUS,
            testset_size=4,
            query_distribution=single_hop_only(),
            seed=5,
            checkpoint_dir=directory,
        )
        results.append(testset.to_list())
        orders.append([line["candidate"] for line in _lines(directory / "candidates.jsonl")])
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(orders[1])
    assert results[0] == results[1]
    assert len(results[0]) == 4


def test_a_checkpoint_of_decisions_written_before_is_still_replayed(fake, tmp_path) -> None:
    # Earlier checkpoints held one "kept" or "rejected" decision per candidate.
    misquote = lambda term, context: "Tomatoes" in context  # noqa: E731 (one refusal at least)
    _writer(fake, misquote=misquote)
    options = {"testset_size": 3, "query_distribution": single_hop_only(), "seed": 2}
    first = generator(fake).generate_with_documents(CORPUS, checkpoint_dir=tmp_path, **options)
    assert first.report.rejected
    old = [
        {"candidate": s.provenance.candidate, "status": "kept", "sample": s.model_dump(mode="json")}
        for s in first
    ] + [
        {"candidate": r.candidate, "status": "rejected", "rejected": r.model_dump(mode="json")}
        for r in first.report.rejected
    ]
    (tmp_path / "candidates.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in old), encoding="utf-8"
    )
    before = fake.chat_count
    again = generator(fake).generate_with_documents(CORPUS, checkpoint_dir=tmp_path, **options)
    assert fake.chat_count == before
    assert again.to_list() == first.to_list() and again.report.resumed_samples == 3
    assert [r.reason for r in again.report.rejected] == [r.reason for r in first.report.rejected]


def test_a_cut_off_persona_costs_one_capped_call_and_only_that_persona(fake) -> None:
    seen = {"personas": 0}

    def cut_first_persona(request, prompt):
        if prompt == "testset.persona":
            seen["personas"] += 1  # persona calls are made one after the other
        if prompt == "testset.persona" and seen["personas"] == 1:
            return truncated(
                '{"name": "Evening student", "role_description": "A stu', usage=(9, 256)
            )
        return None

    _writer(fake, fail=cut_first_persona)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only()
    )
    assert len(testset) == 2
    personas = prompt_requests(fake, "testset.persona")
    assert {r.body.get("max_tokens") for r in personas} == {PERSONA_MAX_TOKENS}
    failures = [f for f in testset.report.failures if f["stage"] == "personas"]
    assert len(personas) == 3  # the cut-off one was not asked again with a bigger budget
    assert len(failures) == 1 and failures[0]["error"].startswith("OutputTruncated")
    made = {s.eval_sample.persona_name for s in testset}
    assert made and made <= {"Evening student", "Retired engineer"}  # the two others
