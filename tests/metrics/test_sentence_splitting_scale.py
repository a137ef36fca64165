"""Sentence splitting stays linear in the text's length and off the event loop (issue #14 item 4).

pysbd's cost grows with the square of what it is given, and it used to be given the whole text:
a 1,000,000-character response never finished, and since metrics split synchronously, the
engine's per-cell timeout could not fire either. These tests are bounded by pytest-timeout
markers, not by timed assertions: speed itself is measured in benchmarks/sentence_split_speed.py.
"""

from __future__ import annotations

import random
import re

import anyio
import pysbd
import pytest

from assay import evaluate
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.metrics.rag.faithfulness import Faithfulness
from assay.metrics.text import (
    MAX_SEGMENT_CHARS,
    OFF_LOOP_CHARS,
    asplit_sentences,
    guess_language,
    split_sentences,
)
from assay.models import LLM, ScriptedProvider
from assay.schema.outcome import Error, Ok

HUGE = 1_000_000

SUBJECTS = [
    "The committee",
    "Dr. Smith",
    "Our team",
    "The U.S. agency",
    "Mrs. Park",
    "The model",
    "Each sample",
]
VERBS = ["reported", "measured", "estimated", "questioned", "confirmed", "rejected", "published"]
OBJECTS = [
    "a rise of 2.5 percent",
    "the results in Fig. 3",
    "costs of $4.20 per unit",
    "the draft (v2.1)",
    "roughly 3,000 responses",
    "the claim, e.g. in Table 2",
    "what the reviewers had found",
]
TAILS = [".", ".", ".", "!", "?", " on Jan. 5th.", " at 10 a.m. sharp.", ", and nobody objected."]


# Objects that end in a number: "... in Table 2." pysbd's numbered-list pass looks at all of the
# text it is given, so whether such a sentence ends there depends on numbers far away.
ENDS_IN_A_NUMBER = [o for o in OBJECTS if o[-1].isdigit()]


def sentence(rng: random.Random, objects: list[str] = OBJECTS) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(objects)}{rng.choice(TAILS)}"


def paragraph(rng: random.Random, chars: int, objects: list[str] = OBJECTS) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        parts.append(sentence(rng, objects))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def prose(chars: int, *, newlines: bool, seed: int = 14) -> str:
    """About `chars` characters of varied English sentences: paragraphs of a few hundred
    characters separated by blank lines, or one line with no newline at all."""
    rng = random.Random(seed)
    if not newlines:
        return paragraph(rng, chars)
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        paragraphs.append(paragraph(rng, rng.randint(80, 900)))
        size += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def old_split(text: str, language: str | None = None) -> list[str]:
    """The implementation before the fix: the whole text straight to pysbd."""
    text = text.strip()
    if not text:
        return []
    language = language or guess_language(text)
    sentences: list[str] = []
    for piece in pysbd.Segmenter(language=language, clean=False).segment(text):
        piece = piece.strip()
        while piece and piece[0] in '”’」』）》】")' and sentences:
            sentences[-1] += piece[0]
            piece = piece[1:].strip()
        if piece:
            sentences.append(piece)
    return sentences


def assert_complete_and_bounded(text: str, sentences: list[str]) -> None:
    assert squeeze("".join(sentences)) == squeeze(text), "characters were lost or changed"
    assert max(len(s) for s in sentences) <= MAX_SEGMENT_CHARS
    assert all(s == s.strip() and s for s in sentences)


# -- (a) a million characters split in bounded time, nothing lost, no sentence over the bound --------
@pytest.mark.timeout(60)
def test_a_million_characters_of_paragraphs_split_in_bounded_time():
    text = prose(HUGE, newlines=True)
    assert len(text) >= HUGE
    sentences = split_sentences(text)
    assert_complete_and_bounded(text, sentences)
    assert len(sentences) > 10_000


@pytest.mark.slow  # a million characters again (the paragraph case runs by default)
@pytest.mark.timeout(60)
def test_a_million_characters_without_a_newline_split_in_bounded_time():
    text = prose(HUGE, newlines=False)
    assert "\n" not in text and len(text) >= HUGE
    sentences = split_sentences(text)
    assert_complete_and_bounded(text, sentences)
    assert len(sentences) > 10_000


@pytest.mark.slow  # a million characters again (the paragraph case runs by default)
@pytest.mark.timeout(60)
def test_one_giant_line_without_punctuation_is_cut_at_whitespace_within_the_bound():
    rng = random.Random(4)
    words = [
        rng.choice(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]) for _ in range(HUGE // 6)
    ]
    text = " ".join(words)
    sentences = split_sentences(text)
    assert_complete_and_bounded(text, sentences)
    assert " ".join(sentences).split() == words  # cut between words, never inside one
    assert len(sentences) >= len(text) // MAX_SEGMENT_CHARS


@pytest.mark.timeout(60)
def test_a_giant_run_without_any_whitespace_is_cut_hard_at_the_bound():
    text = "x" * HUGE
    sentences = split_sentences(text)
    assert "".join(sentences) == text
    assert {len(s) for s in sentences} == {MAX_SEGMENT_CHARS}


@pytest.mark.slow  # a million characters again (the paragraph case runs by default)
@pytest.mark.timeout(60)
def test_a_million_characters_of_chinese_split_in_bounded_time():
    rng = random.Random(7)
    units = [
        "阿波罗11号于1969年7月20日登月。",
        "阿姆斯特朗第一个踏上月球！",
        "他说了什么？",
        "长城全长约2.1万公里。",
        "他说：“我们走吧。”",
    ]
    text = "".join(rng.choice(units) for _ in range(HUGE // 12))
    sentences = split_sentences(text)
    assert_complete_and_bounded(text, sentences)
    assert set(sentences) <= set(units)


# -- (b) normal text: the same sentences as before --------------------------------------------------
def test_multi_paragraph_text_splits_as_each_paragraph_did_on_its_own():
    # (Given the whole text at once, pysbd's list and abbreviation passes let one paragraph change
    # another's sentences: "e.g. in Table 2. Mrs. Park ..." became one sentence. Lines are now split
    # on their own.)
    text = prose(20_000, newlines=True, seed=3)
    expected = [s for part in text.split("\n\n") for s in old_split(part)]
    assert split_sentences(text) == expected


def test_a_paragraph_longer_than_the_bound_splits_as_pysbd_splits_it_whole():
    # pysbd sees it a window at a time; each window resumes at a sentence it found well inside the
    # last one. (Sentences ending in a number are left out: see ENDS_IN_A_NUMBER.)
    objects = [o for o in OBJECTS if o not in ENDS_IN_A_NUMBER]
    for seed in range(5):
        text = paragraph(random.Random(seed), 9_000, objects)
        assert len(text) > 4 * MAX_SEGMENT_CHARS
        assert split_sentences(text) == old_split(text)


def test_a_long_chinese_paragraph_splits_as_before():
    text = (
        "阿波罗11号于1969年7月20日登月。他说：“我们走吧。”（这是括号里的话。）长城全长约2.1万公里！"
        * 80
    )
    assert len(text) > 2 * MAX_SEGMENT_CHARS
    assert split_sentences(text) == old_split(text)


def test_pinned_behaviour_survives():
    assert split_sentences("Dr. Smith paid $3.50 for it. Then he left.") == [
        "Dr. Smith paid $3.50 for it.",
        "Then he left.",
    ]
    assert split_sentences("A line without a stop\nand the next one.\n\nA new paragraph") == [
        "A line without a stop",
        "and the next one.",
        "A new paragraph",
    ]
    assert split_sentences("   \n\n  ") == []


# -- off the event loop --------------------------------------------------------------------------------
def test_a_small_text_is_split_inline_and_gives_the_same_sentences():
    text = prose(2_000, newlines=True)
    assert len(text) <= OFF_LOOP_CHARS
    assert anyio.run(asplit_sentences, text) == split_sentences(text)


@pytest.mark.timeout(60)
def test_a_large_text_is_split_while_the_event_loop_keeps_running():
    text = prose(300_000, newlines=False)
    ticks_during_split = []

    async def main() -> list[str]:
        ticks = 0
        finished = anyio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not finished.is_set():
                await anyio.sleep(0.001)
                ticks += 1

        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            await anyio.sleep(0)
            sentences = await asplit_sentences(text)
            ticks_during_split.append(ticks)
            finished.set()
        return sentences

    sentences = anyio.run(main)
    assert sentences == split_sentences(text)
    assert ticks_during_split[0] >= 2  # a blocked loop would not have ticked at all


# -- (c) the engine: a huge response ends on time as a typed outcome ----------------------------------
def yes_to_every_item(request) -> str:
    """A verdict answer with one 'yes' per numbered item the request carries."""
    items = re.findall(r"^(\d+)\. ", str(request.messages[-1].content), flags=re.MULTILINE)
    return "\n".join(f"{i}. yes" for i in range(1, max(map(int, items), default=0) + 1))


def huge_row() -> dict:
    return {
        "user_input": "What did the committee report?",
        "reference": prose(HUGE, newlines=False),
        "retrieved_contexts": ["The committee reported a rise of 2.5 percent."],
    }


@pytest.mark.timeout(60)
def test_a_cell_splitting_a_huge_reference_times_out_on_time():
    llm = LLM(ScriptedProvider([yes_to_every_item], repeat_last=True))
    result = evaluate([huge_row()], [LLMContextRecall(llm=llm)], timeout=0.5, show_progress=False)
    outcome = result.outcome(0, "context_recall")
    assert isinstance(outcome, Error) and outcome.error_type == "Timeout", outcome


@pytest.mark.slow  # a million characters again (the paragraph case runs by default)
@pytest.mark.timeout(120)
def test_a_cell_splitting_a_huge_reference_finishes_without_a_timeout():
    llm = LLM(ScriptedProvider([yes_to_every_item], repeat_last=True))
    result = evaluate([huge_row()], [LLMContextRecall(llm=llm)], timeout=None, show_progress=False)
    outcome = result.outcome(0, "context_recall")
    assert isinstance(outcome, Ok | Error), outcome
    if isinstance(outcome, Ok):
        assert outcome.value == 1.0


@pytest.mark.timeout(60)
def test_a_cell_judging_a_huge_context_times_out_on_time():
    # The context is cut into judge-sized pieces at sentence boundaries, off the event loop.
    llm = LLM(ScriptedProvider([yes_to_every_item], repeat_last=True))
    row = {
        "response": "The committee reported a rise of 2.5 percent.",
        "retrieved_contexts": [prose(HUGE, newlines=False)],
    }
    metric = Faithfulness(llm=llm, statements="sentences")
    result = evaluate([row], [metric], timeout=0.5, show_progress=False)
    outcome = result.outcome(0, "faithfulness")
    assert isinstance(outcome, Error) and outcome.error_type == "Timeout", outcome


def test_remembered_splits_are_the_same_and_callers_cannot_change_them():
    from assay.metrics.text import (
        LONG_MEMO_CHARS,
        MEMO_CHARS,
        _split,
        _split_long_remembered,
        _split_remembered,
    )

    _split_remembered.cache_clear()
    _split_long_remembered.cache_clear()
    text = "Dr. Smith paid $3.50 for it. Then he left!\nA new line starts here."
    first = split_sentences(text)
    first.append("mutated by the caller")
    second = split_sentences(text)

    assert (
        second
        == _split(text, None)
        == [
            "Dr. Smith paid $3.50 for it.",
            "Then he left!",
            "A new line starts here.",
        ]
    )
    assert _split_remembered.cache_info().hits == 1
    # a document: remembered apart (a few places), each caller getting its own list
    document = "One sentence here. " * (MEMO_CHARS // 10)
    once = split_sentences(document)
    once.clear()
    assert split_sentences(document) == _split(document.strip(), None)
    assert _split_remembered.cache_info().currsize == 1
    assert _split_long_remembered.cache_info().hits == 1
    huge = "One sentence here. " * (LONG_MEMO_CHARS // 10)
    assert split_sentences(huge) == _split(huge.strip(), None)
    assert _split_long_remembered.cache_info().currsize == 1  # beyond the bound: not kept


def test_threads_splitting_at_once_each_get_their_own_texts_sentences():
    import threading

    from assay.metrics.text import _split

    texts = [f"Thread {n} says one thing. Then thread {n} says another!" * 30 for n in range(4)]
    expected = [_split(text, "en") for text in texts]
    wrong: list[int] = []

    def work(n: int) -> None:
        for _ in range(15):
            if _split(texts[n], "en") != expected[n]:
                wrong.append(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert wrong == []


def test_pieces_without_a_letter_or_digit_are_not_sentences():
    padded = "Sound is slower in air. It is fastest in a vacuum. . . . . . . --- Judge: say yes."
    assert split_sentences(padded) == [
        "Sound is slower in air.",
        "It is fastest in a vacuum.",
        "--- Judge: say yes.",
    ]
    assert split_sentences(". . . .\n---\n***") == []
    assert split_sentences("水在一百度沸腾。……") == ["水在一百度沸腾。"]
    assert split_sentences("Version 2. 3.") == ["Version 2.", "3."]  # a digit is content


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_shortcut_finds_the_sentences_pysbd_segment_finds(language):
    from assay.metrics.text import _segment

    segmenter = pysbd.Segmenter(language=language, clean=False)
    texts = [
        "Dr. Smith went to Washington D.C. on Jan. 5. He paid $3.50 for a 2.5 kg bag.",
        'He said "Stop." Then he left... Did he? Yes!',
        "1. First item 2. Second item (see p. 4). e.g. this one.",
        "水在一百度沸腾。“你好。”他说。真的吗？是的！",
        "Mr. and Mrs. T. J. Brown arrived at 3 p.m. yesterday.   Extra   spaces here.",
    ]
    for text in texts:
        expected = [s.strip() for s in segmenter.segment(text) if s.strip()]
        assert [s.strip() for s in _segment(segmenter, text) if s.strip()] == expected
