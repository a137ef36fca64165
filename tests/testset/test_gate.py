"""The quality gate: each check refuses what it should, refused candidates are kept with their
reason and replaced, and a shortfall says why."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from assay.schema.samples import SingleTurnSample
from assay.testset import QualityGate
from assay.testset.gate import leans_on_context
from assay.testset.synthesizers import (
    MultiHopSpecificQuerySynthesizer,
    SingleHopSpecificQuerySynthesizer,
)
from tests.testset.corpus import CORPUS, KETTLES
from tests.testset.fake_model import Writer
from tests.testset.helpers import generator, prompt_requests, single_hop_only

CONTEXT = "The Brass Kettle holds two litres of water. It sits on a cast iron stand."


def _sample(
    question: str, answer: str = "It holds two litres.", ids=("a",), contexts=(CONTEXT,)
) -> SingleTurnSample:
    return SingleTurnSample(
        user_input=question,
        reference=answer,
        reference_contexts=list(contexts),
        reference_context_ids=list(ids),
    )


@pytest.mark.parametrize(
    "question",
    [
        "According to the passage, how much water does it hold?",
        "What does the text above say about the kettle?",
        "In the given document, what is the stand made of?",
        "How is the given Python package structure imported?",
        "What does the provided example print?",
        "根据上文，水壶能装多少水？",
    ],
)
def test_questions_leaning_on_unseen_text_are_caught(question: str) -> None:
    assert leans_on_context(question)


@pytest.mark.parametrize(
    "question",
    [
        "How much water does the Brass Kettle hold?",
        "What is the context manager protocol in Python?",
        "Which methods must the context managers used by a with statement define?",
        "Given a list of numbers, how do you sort it in place?",
    ],
)
def test_standalone_questions_pass(question: str) -> None:
    # "the context manager" is a Python term, not a reference to the reader's context
    assert leans_on_context(question) is None


def test_cheap_checks_in_order() -> None:
    gate = QualityGate()
    ok = gate.cheap_checks(
        _sample("How much water does the Brass Kettle hold?"),
        ["holds two litres of water"],
        [],
        False,
    )
    assert ok.passed and ok.scores["evidence_contexts"] == [0]
    assert gate.cheap_checks(_sample("Hi?"), ["x"], [], False).reason.startswith("empty")
    missing = gate.cheap_checks(
        _sample("How much water does the Brass Kettle hold?"), [], [], False
    )
    assert missing.reason == "evidence: the draft cites no evidence"
    invented = gate.cheap_checks(
        _sample("How much water does the Brass Kettle hold?"), ["holds three litres"], [], False
    )
    assert invented.reason.startswith("evidence: quote not found")
    twin = gate.cheap_checks(
        _sample("How much water does the brass kettle hold"),
        ["two litres"],
        ["How much water does the Brass Kettle hold?"],
        False,
    )
    assert twin.reason.startswith("duplicate: 100%")
    one = gate.cheap_checks(
        _sample(
            "How much water and what stand?",
            contexts=(CONTEXT, "Other chunk text here."),
            ids=("a", "b"),
        ),
        ["two litres", "cast iron stand"],
        [],
        True,
    )
    assert one.reason == "multi_hop: the evidence comes from one chunk only"
    single = gate.cheap_checks(_sample("How much water and what stand?"), ["two litres"], [], True)
    assert single.reason == "multi_hop: fewer than two distinct chunks"


def _writer(fake, **knobs) -> Writer:
    writer = Writer(**knobs)
    fake.server.default = writer
    fake.writer = writer
    return writer


def test_invented_quotes_are_refused_and_replaced(fake) -> None:
    _writer(fake, misquote=lambda term, context: "Tomatoes" in context)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only()
    )
    assert len(testset) == 3
    assert all("Tomatoes" not in s.eval_sample.reference_contexts[0] for s in testset)
    refused = testset.report.rejected
    invented = [r for r in refused if r.reason.startswith("evidence: quote not found")]
    assert invented and all("Tomatoes" in (r.reference or "") for r in invented)
    assert all(r.reason.split(":")[0] in ("evidence", "duplicate") for r in refused)
    assert all(r.user_input and r.kind == "rejected" for r in refused)
    # refused at a cheap check: no judge call was paid for them
    judged_then_refused = sum("reference_supported" in r.gate for r in refused)
    assert len(prompt_requests(fake, "supported")) == 3 + judged_then_refused


def test_when_every_candidate_fails_the_shortfall_is_reported(fake) -> None:
    _writer(fake, leaning=lambda term, context: True)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=4, query_distribution=single_hop_only(), max_candidates=6
    )
    report = testset.report
    assert len(testset) == 0 and report.shortfall == 4
    assert report.candidates_tried == 6 and len(report.rejected) == 6
    assert all(
        r.reason.startswith("standalone: the question refers to 'According to the passage'")
        for r in report.rejected
    )
    assert "the candidate budget of 6 was spent" in report.shortfall_reasons
    assert "candidates refused or failed: standalone 6" in report.shortfall_reasons


def test_near_duplicates_are_refused(fake) -> None:
    _writer(fake, same_question=True)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=single_hop_only()
    )
    assert len(testset) == 1
    assert testset.report.rejection_counts()["duplicate"] >= 2
    assert testset.report.shortfall == 2 and testset.report.shortfall_reasons


def test_unsupported_references_are_refused_by_the_faithfulness_judge(fake) -> None:
    _writer(fake, unsupported_words={"Leeds"})
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=single_hop_only()
    )
    refused = [r for r in testset.report.rejected if r.reason.startswith("unsupported")]
    assert refused and all(r.gate["reference_supported"] == 0.0 for r in refused)
    assert len(testset) == 2  # both from the garden document, the only one never naming Leeds
    for sample in testset:
        assert "Leeds" not in sample.eval_sample.reference_contexts[0]
        assert sample.provenance.gate["reference_supported"] == 1.0
        assert sample.provenance.gate["answerable"] == 1.0


def test_a_multi_hop_answer_from_one_chunk_is_refused() -> None:
    # e.g. a sample from another generator, judged by the gate (the benchmark judges Ragas')
    second = "The Iron Stand weighs four kilos."
    sample = _sample(
        "How much does the kettle hold and what does its stand weigh?",
        ids=("a", "b"),
        contexts=(CONTEXT, second),
    )
    one = QualityGate().cheap_checks(sample, ["holds two litres of water"], [], True)
    assert not one.passed and one.reason == "multi_hop: the evidence comes from one chunk only"
    both = QualityGate().cheap_checks(
        sample, ["holds two litres of water", "weighs four kilos"], [], True
    )
    assert both.passed and both.scores["evidence_contexts"] == [0, 1]


def test_a_multi_hop_draft_must_cite_one_sentence_of_each_context(fake) -> None:
    writer = _writer(fake)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=[(MultiHopSpecificQuerySynthesizer(), 1.0)]
    )
    assert len(testset) == 2
    drafts = prompt_requests(fake, "testset.multi_hop")
    schema = drafts[0].body["response_format"]["json_schema"]["schema"]
    evidence = schema["properties"]["evidence"]
    assert evidence["minItems"] == evidence["maxItems"] == len(evidence["prefixItems"]) == 2
    first, second = (set(item["enum"]) for item in evidence["prefixItems"])
    assert first and second and not first & second  # each context's own sentence numbers
    parts = schema["properties"]["parts"]  # and one answer part per context
    assert parts["minItems"] == parts["maxItems"] == len(parts["prefixItems"]) == 2
    assert list(schema["properties"]) == ["evidence", "question", "parts"]
    for sample in testset:  # the reference is the parts, joined
        assert all(quote in sample.eval_sample.reference for quote in sample.provenance.evidence)
    assert writer.calls["testset.multi_hop"] == len(drafts)
    # a writer that ignores the schema and cites one context is refused by validation: the
    # candidate fails (after the model layer's repair tries) and is never kept
    _writer(fake, one_hop_evidence=True)
    refused = generator(fake).generate_with_documents(
        CORPUS,
        testset_size=2,
        query_distribution=[(MultiHopSpecificQuerySynthesizer(), 1.0)],
        max_candidates=2,
    )
    assert len(refused) == 0 and refused.report.rejected
    assert {r.kind for r in refused.report.rejected} == {"failed"}
    assert all("evidence" in r.reason for r in refused.report.rejected)


def test_a_gate_without_a_judge_still_runs_the_cheap_checks(fake) -> None:
    testset = generator(fake, gate=QualityGate(llm=None)).generate_with_documents(
        [KETTLES], testset_size=2, query_distribution=single_hop_only()
    )
    assert len(testset) == 2 and all(
        s.provenance.gate == {**s.provenance.gate, "judged": False} for s in testset
    )
    assert prompt_requests(fake, "supported") == []


def test_a_question_in_another_language_than_its_documents_is_refused(fake) -> None:
    from tests.testset.corpus import CHINESE

    _writer(fake, english_questions=True)
    testset = generator(fake).generate_with_documents(
        [CHINESE], testset_size=1, query_distribution=single_hop_only()
    )
    assert len(testset) == 0
    assert {r.reason for r in testset.report.rejected} == {
        "language: the question is not in the documents' language (chinese)"
    }
    chinese = QualityGate().cheap_checks(
        _sample("茶壶多大？"), ["two litres"], [], False, "chinese"
    )
    assert chinese.passed  # a five-character Chinese question is not "empty"


def test_a_slipped_quote_passes_with_the_contexts_own_words_and_an_exact_gate_refuses_it() -> None:
    question = "How much water does the Brass Kettle hold?"
    slipped = ["The brass Kettle holds two litres of water, It sits on a cast iron stand"]
    result = QualityGate().cheap_checks(_sample(question), slipped, [], False)
    assert result.passed
    assert result.scores["evidence_verbatim"] == [
        "The Brass Kettle holds two litres of water. It sits on a cast iron stand"
    ]
    assert 95 <= result.scores["evidence_similarity"][0] < 100
    strict = QualityGate(evidence_similarity=100.0).cheap_checks(
        _sample(question), slipped, [], False
    )
    assert strict.reason.startswith("evidence: quote not found")


@pytest.mark.parametrize(
    ("field", "value"),
    [("evidence_similarity", 120.0), ("duplicate_threshold", -1), ("support_threshold", 1.5)],
)
def test_a_threshold_outside_its_scale_is_refused_by_name(field, value) -> None:
    from assay.errors import UsageError

    with pytest.raises(UsageError, match=f"QualityGate.{field} must be a number in"):
        QualityGate(**{field: value})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("each_hop_needed", "no", "must be True or False, got 'no'"),
        ("each_hop_needed", 1, "must be True or False, got 1"),
        ("min_question_tokens", 0, "must be a whole number of at least 1, got 0"),
        ("min_question_tokens", 2.5, "must be a whole number of at least 1, got 2.5"),
    ],
)
def test_a_switch_or_count_of_the_wrong_kind_is_refused_by_name(field, value, message) -> None:
    from assay.errors import UsageError

    with pytest.raises(UsageError, match=rf"QualityGate\.{field} {message}"):
        QualityGate(**{field: value})
    assert QualityGate(**{field: False if field == "each_hop_needed" else 5})


def test_support_is_every_statement_by_default_or_a_mean_probability_when_asked(fake) -> None:
    import asyncio

    from assay.errors import UsageError

    writer = _writer(fake, unsupported_statements={"purple"})
    sample = SingleTurnSample(
        user_input="What does the kettle guide say about descaling?",
        reference="Descale the kettle monthly. The kettle is purple.",
        reference_contexts=["Descale the kettle monthly with vinegar."],
    )
    default = asyncio.run(QualityGate(llm=fake.llm()).judged_checks(sample, "english"))
    assert not default.passed and default.scores["reference_supported"] == 0.5
    assert default.reason.startswith("unsupported: support 0.50 is below 1")
    assert default.scores["judged_with"]["support_scoring"] == "verdicts"
    lenient = QualityGate(llm=fake.llm(), support_scoring="probability", support_threshold=0.4)
    result = asyncio.run(lenient.judged_checks(sample, "english"))
    assert result.passed and 0.4 <= result.scores["reference_supported"] < 0.6
    assert writer.calls["supported"] == 2
    with pytest.raises(UsageError, match=r"QualityGate\.support_scoring must be"):
        QualityGate(support_scoring="mean")


def test_a_multi_hop_answer_that_one_context_supports_alone_is_refused(fake) -> None:
    # the draft cites a sentence from each of two chunks (the cheap check passes), but its
    # answer is the first chunk's sentence: the second hop is not needed
    _writer(fake, one_hop_answer=True)
    multi_hop = [(MultiHopSpecificQuerySynthesizer(), 1.0)]
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=multi_hop, max_candidates=4
    )
    assert len(testset) == 0
    refused = testset.report.rejected
    assert refused and all(
        r.reason == "multi_hop: context 1 of 2 alone supports the whole reference, so the other "
        "hops are not needed"
        for r in refused
    )
    assert all(r.gate["supported_by_one_context"] == [1.0] for r in refused)
    # the same drafts with the check turned off are kept
    _writer(fake, one_hop_answer=True)
    lenient = generator(fake, gate=QualityGate(llm=fake.llm(), each_hop_needed=False))
    kept = lenient.generate_with_documents(CORPUS, testset_size=2, query_distribution=multi_hop)
    assert len(kept) == 2
    assert all("supported_by_one_context" not in s.provenance.gate for s in kept)


def test_a_multi_hop_answer_using_both_contexts_is_kept_with_each_contexts_support(fake) -> None:
    _writer(fake)
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=2, query_distribution=[(MultiHopSpecificQuerySynthesizer(), 1.0)]
    )
    assert len(testset) == 2
    for sample in testset:
        alone = sample.provenance.gate["supported_by_one_context"]
        assert len(alone) == len(sample.eval_sample.reference_contexts) >= 2
        assert all(value < 1.0 for value in alone)
        assert sample.provenance.gate["reference_supported"] == 1.0


@dataclass
class Broken(SingleHopSpecificQuerySynthesizer):
    """A synthesizer whose every candidate fails."""

    name: str = "broken"

    async def _generate_sample(self, scenario, callbacks):
        raise RuntimeError("this writer never answers")


def test_a_synthesizer_that_spends_its_share_of_the_budget_hands_the_rest_over(fake) -> None:
    # a synthesizer none of whose candidates succeeds: without a share of the budget per
    # synthesizer it would spend the whole budget and leave the set short
    _writer(fake)
    distribution = [(SingleHopSpecificQuerySynthesizer(), 0.5), (Broken(), 0.5)]
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=4, query_distribution=distribution, max_candidates=12
    )
    report = testset.report
    assert len(testset) == 4 and report.shortfall == 0
    assert report.requested_split == {"single_hop_specific_query_synthesizer": 2, "broken": 2}
    assert report.produced_split == {"single_hop_specific_query_synthesizer": 4, "broken": 0}
    failed = [r for r in report.rejected if r.synthesizer == "broken"]
    assert len(failed) == 6 and {r.kind for r in failed} == {"failed"}  # its share: 12 split 2:2
    (move,) = report.reassigned
    assert move.synthesizer == "broken" and move.samples == 2
    assert move.to == {"single_hop_specific_query_synthesizer": 2}
    assert move.reason == "spent its share of the candidate budget (6 tried, 6 refused or failed)"
    assert report.candidates_tried <= 12


def test_when_no_synthesizer_can_take_a_share_the_last_keeps_the_rest_of_the_budget(fake) -> None:
    # both fail and spend their shares in the same wave: the first, with nobody to hand over
    # to, keeps the rest of the budget, and the second hands its share to it; the budget is
    # spent and the shortfall says why
    _writer(fake)
    distribution = [(Broken(name="first"), 0.5), (Broken(name="second"), 0.5)]
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=4, query_distribution=distribution, max_candidates=10
    )
    report = testset.report
    assert len(testset) == 0 and report.shortfall == 4
    assert report.candidates_tried == 10
    assert [(m.synthesizer, m.to) for m in report.reassigned] == [("second", {"first": 2})]
    assert "the candidate budget of 10 was spent" in report.shortfall_reasons


@dataclass
class BrokenOnce(Broken):
    """A failing synthesizer with a single scenario: its stream runs dry at once."""

    name: str = "broken_once"

    def scenario_stream(self, kg, personas, limit, seed):
        return super().scenario_stream(kg, personas, limit, seed)[:1]


def test_a_dry_synthesizer_hands_over_even_to_one_that_had_no_share(fake) -> None:
    # size 1 over two synthesizers: the second has no quota and so no share of the budget, yet
    # it is the only one left when the first runs dry
    _writer(fake)
    distribution = [(BrokenOnce(), 0.5), (SingleHopSpecificQuerySynthesizer(), 0.5)]
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=1, query_distribution=distribution
    )
    report = testset.report
    assert len(testset) == 1 and report.shortfall == 0
    assert report.produced_split == {"broken_once": 0, "single_hop_specific_query_synthesizer": 1}
    (move,) = report.reassigned
    assert move.reason == "ran out of candidates after 1 tried"


def test_a_budget_smaller_than_the_synthesizers_still_gives_each_one_try(fake) -> None:
    _writer(fake)
    distribution = [(SingleHopSpecificQuerySynthesizer(name=n), 1.0) for n in "abc"]
    testset = generator(fake).generate_with_documents(
        CORPUS, testset_size=3, query_distribution=distribution, max_candidates=2
    )
    report = testset.report
    assert report.candidates_tried == 2 and len(testset) == 2
    assert "the candidate budget of 2 was spent" in report.shortfall_reasons
    # "c" never tried: the budget was spent, not its share (it had one)
    assert all("0 tried" not in m.reason for m in report.reassigned)
