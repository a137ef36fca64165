"""Evidence by sentence number: numbering, rendering and looking citations up."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.prompts.render import render
from assay.schema.samples import SingleTurnSample
from assay.testset.asking import testset_prompt as load_testset_prompt
from assay.testset.citing import NumberedContexts
from assay.testset.gate import QualityGate
from assay.testset.synthesizers.single_hop import Draft
from assay.testset.text import locate_quote

FIRST = "Tuples are immutable. Lists can be changed in place.\nA set has no duplicates."
SECOND = "Dictionaries map keys to values. Keys must be hashable."


def test_sentences_are_numbered_across_contexts_without_reuse():
    numbered = NumberedContexts.of([FIRST, SECOND])
    assert [s for _, s in numbered.sentences] == [
        "Tuples are immutable.",
        "Lists can be changed in place.",
        "A set has no duplicates.",
        "Dictionaries map keys to values.",
        "Keys must be hashable.",
    ]
    assert [i for i, _ in numbered.sentences] == [0, 0, 0, 1, 1]
    block = numbered.block()
    assert block.startswith("Context A:\n[1] Tuples are immutable.\n")
    assert "Context B:\n[4] Dictionaries map keys to values.\n[5] Keys must be hashable." in block


def test_citations_become_the_contexts_own_sentences_once_each_in_cited_order():
    numbered = NumberedContexts.of([FIRST, SECOND])
    assert numbered.quotes([5, 2, 5]) == [
        "Keys must be hashable.",
        "Lists can be changed in place.",
    ]


def test_a_number_naming_no_sentence_is_refused_by_the_gate_with_that_number():
    numbered = NumberedContexts.of([FIRST])
    quotes = numbered.quotes([2, 9])
    sample = SingleTurnSample(
        user_input="Can a Python list be changed after it is made?",
        reference="Lists can be changed in place.",
        reference_contexts=[FIRST],
    )
    result = QualityGate().cheap_checks(sample, quotes, [], multi_hop=False)
    assert not result.passed
    assert result.reason.startswith("evidence: quote not found")
    assert "sentence 9: there are 3" in result.reason
    # the valid citation alone passes, and what the sample cites is the context's sentence
    result = QualityGate().cheap_checks(sample, quotes[:1], [], multi_hop=False)
    assert result.passed, result.reason
    assert result.scores["evidence_verbatim"] == ["Lists can be changed in place."]
    assert result.scores["evidence_similarity"] == [100.0]


def test_the_single_hop_prompt_shows_the_writer_numbered_sentences():
    numbered = NumberedContexts.of([FIRST])
    messages = render(
        load_testset_prompt("testset.single_hop"),
        {
            "language": "english",
            "persona": "p",
            "term": "tuple",
            "style": "s",
            "length": "l",
            "context": numbered.lines(0),
        },
    )
    assert (
        "<context>\n[1] Tuples are immutable.\n[2] Lists can be changed in place.\n"
        "[3] A set has no duplicates.\n</context>" in messages[-1].content
    )
    # the worked example cites by number too, so the writer sees the contract once done right
    assert '"evidence": [2]' in messages[2].content


@pytest.mark.parametrize(
    ("given", "expected"), [([1, 3], [1, 3]), (["2", " [4] "], [2, 4]), ([], [])]
)
def test_draft_evidence_reads_numbers_written_as_text(given, expected):
    draft = Draft(question="q", answer="a", evidence=given)
    assert draft.evidence == expected


def test_draft_evidence_refuses_a_quote_naming_the_field():
    with pytest.raises(ValidationError, match="evidence holds sentence numbers"):
        Draft(question="q", answer="a", evidence=["Tuples are immutable."])


def test_hard_wrapped_prose_is_one_sentence_and_code_keeps_its_lines():
    rst = (
        "Title of the page\n"
        "=================\n"
        "\n"
        "Besides the statement just introduced, Python uses the usual\n"
        "flow control statements, with some twists.  For\n"
        "example::\n"
        "\n"
        "   >>> x = 1\n"
        "   >>> print(x)\n"
        "   1\n"
        "\n"
        ">>> y = 2\n"
        "Result line\n"
        "\n"
        "* first item\n"
        "* second item\n"
        "```\n"
        "plain code\n"
        "more code\n"
        "```\n"
    )
    sentences = NumberedContexts.of([rst]).texts()
    assert sentences[:4] == [
        "Title of the page",
        "Besides the statement just introduced, Python uses the usual flow control statements, "
        "with some twists.",
        "For example::",
        ">>> x = 1",
    ]
    assert ">>> y = 2" in sentences and "Result line" in sentences  # output is not glued to code
    assert "first item" in " ".join(sentences) and "* second item" in sentences
    assert "plain code" in sentences and "more code" in sentences  # fenced lines stay apart


def test_a_sentence_cut_inside_an_inline_role_is_joined_again_verbatim():
    text = "The :keyword:`!if` statement.  An  :keyword:`!elif` part is optional."
    sentences = NumberedContexts.of([text]).texts()
    assert sentences == ["The :keyword:`!if` statement.", "An  :keyword:`!elif` part is optional."]
    for sentence in sentences:
        assert locate_quote(sentence, [text], min_similarity=100.0) is not None


def test_every_sentence_of_wrapped_text_is_found_in_its_context():
    text = "\n".join(
        f"Line {i} of a paragraph that wraps and keeps going" + ("." if i % 3 == 0 else "")
        for i in range(12)
    )
    for sentence in NumberedContexts.of([text]).texts():
        assert locate_quote(sentence, [text], min_similarity=100.0) is not None, sentence


def test_a_writer_citing_everything_keeps_the_sentences_that_share_the_answers_words():
    context = (
        "Tuples are immutable sequences.\n1\n>>> t = 1, 2\nLists can be changed in place.\n"
        "A list keeps its order.\nSets drop duplicates."
    )
    numbered = NumberedContexts.of([context])
    everything = list(range(1, len(numbered.sentences) + 1))
    kept, sources = numbered.evidence(
        everything, "Lists can be changed in place and keep their order."
    )
    assert sources == [0] * len(kept)
    assert "Lists can be changed in place." in kept and "1" not in kept and len(kept) <= 3
    # in the contexts' order, and a few citations are kept as given
    assert numbered.evidence([5, 1], "anything")[0] == [
        "Tuples are immutable sequences.",
        "A list keeps its order.",
    ]
    # an impossible number is kept, so the gate refuses the draft and names it
    quotes, sources = numbered.evidence([*everything, 40], "Lists change.")
    assert quotes[-1].startswith("<sentence 40:") and sources[-1] == -1


def test_a_multi_hop_answer_citing_everything_keeps_one_sentence_per_context():
    numbered = NumberedContexts.of([FIRST, SECOND])
    kept, sources = numbered.evidence([1, 2, 3, 4, 5], "Lists change; dictionaries map keys.")
    assert set(sources) == {0, 1} and len(kept) == 3
    assert "Lists can be changed in place." in kept
    assert "Dictionaries map keys to values." in kept


def test_a_fence_with_a_language_tag_does_not_glue_the_rest_of_the_text():
    text = "Intro.\n\n```python\nx = 1\n```\n\nFirst after. Second after."
    sentences = NumberedContexts.of([text]).texts()
    assert sentences[-2:] == ["First after.", "Second after."]


def test_sentences_too_short_to_find_are_left_out_of_the_evidence_while_others_remain():
    text = "The answer is printed below.\n>>> print(42)\n42"
    numbered = NumberedContexts.of([text])
    assert numbered.texts() == ["The answer is printed below.", ">>> print(42)", "42"]
    assert numbered.findable == frozenset({1, 2})
    assert numbered.evidence([3, 1], "It prints 42.")[0] == ["The answer is printed below."]
    # cited alone, the short one stays, and the gate says it cannot find it
    assert numbered.evidence([3], "42")[0] == ["42"]


def test_a_sentence_two_contexts_share_counts_for_the_context_it_was_cited_from():
    first = "Install the package with pip. Note: this feature is experimental."
    second = "The cache stores answers on disk. Note: this feature is experimental."
    numbered = NumberedContexts.of([first, second])
    sample = SingleTurnSample(
        user_input="How is the package installed and where are answers cached?",
        reference="Install it with pip; answers are stored on disk.",
        reference_contexts=[first, second],
        reference_context_ids=["a", "b"],
    )
    gate = QualityGate()
    both_from_second = numbered.evidence([3, 4], "answers stored on disk, experimental")
    assert both_from_second[1] == [1, 1]
    refused = gate.cheap_checks(sample, both_from_second[0], [], True, sources=both_from_second[1])
    assert refused.reason == "multi_hop: the evidence comes from one chunk only"
    one_each = numbered.evidence([1, 4], "pip, experimental")
    passed = gate.cheap_checks(sample, one_each[0], [], True, sources=one_each[1])
    assert passed.passed, passed.reason
    assert passed.scores["evidence_contexts"] == [0, 1]


def test_a_multi_hop_draft_may_cite_only_prose_sentences_of_each_context():
    from assay.testset.citing import reads_as_prose
    from assay.testset.synthesizers.multi_hop import multi_hop_draft

    assert not reads_as_prose("Tuples and Sequences")  # a heading
    assert not reads_as_prose("_tut-intro:") and not reads_as_prose("For example::")
    assert reads_as_prose("A tuple consists of a number of values separated by commas.")
    assert reads_as_prose("茶壶可以装两升水，放在铸铁架上。")  # no spaces, still a sentence
    assert not reads_as_prose("下面的例子展示了如何使用元组：")  # a full-width colon leads in
    assert not reads_as_prose('print("-- Do you have any", kind, "?")')  # code
    assert not reads_as_prose(">>> combined_example(pos_only=1, standard=2, kwd_only=3)")
    assert reads_as_prose("It returns the list (see :ref:`tut-lists`).")
    assert reads_as_prose('Write "yes" when the text says "so."')
    first = (
        "Tuples and Sequences\n\n"
        "A tuple consists of a number of values separated by commas.\n\n"
        "For example::\n\n"
        "Tuples may be nested inside other tuples without trouble."
    )
    # nothing reads as prose: the findable sentences stay, the unfindable "a=1,)" does not
    second = "Short.\nNo prose here\na=1,\n)"
    numbered = NumberedContexts.of([first, second])
    texts = numbered.texts()
    heading = texts.index("Tuples and Sequences") + 1
    prose = [n for n, t in enumerate(texts, start=1) if t.startswith(("A tuple", "Tuples may"))]
    assert numbered.citable(0) == prose and heading not in numbered.citable(0)
    own = [n for n, (i, _) in enumerate(numbered.sentences, 1) if i == 1]
    unfindable = [n for n in own if n not in numbered.findable]
    assert unfindable and numbered.citable(1) == [n for n in own if n not in unfindable]
    draft = multi_hop_draft(numbered)
    ok = draft(question="q", parts=["a ", " b"], evidence=[prose[0], numbered.citable(1)[0]])
    assert list(ok.evidence) == [prose[0], numbered.citable(1)[0]] and ok.answer == "a b"
    labelled = draft(
        question="q",
        parts=["Context A: Tuples nest.", "context b - Short."],
        evidence=[prose[0], numbered.citable(1)[0]],
    )
    assert labelled.answer == "Tuples nest. Short."  # the prompt's labels are not the answer
    with pytest.raises(ValidationError):
        draft(question="q", parts=["a", "b"], evidence=[heading, numbered.citable(1)[0]])
    with pytest.raises(ValidationError):  # one answer part per context, no fewer
        draft(question="q", parts=["a"], evidence=[prose[0], numbered.citable(1)[0]])
