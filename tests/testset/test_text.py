"""Classical text processing: sections, exact chunks, keyphrases, entities, summaries, language."""

from __future__ import annotations

import pytest

from assay.testset.terms import detect_language, entities, extractive_summary, keyphrases
from assay.testset.text import chunk_document, count_tokens, quote_in, sections_at, split_sections
from tests.testset.corpus import CHINESE, FOUNDRY, KETTLES, NO_HEADINGS


def test_markdown_and_rst_headings_make_nested_sections_in_order() -> None:
    md = [s.headings for s in split_sections(KETTLES)]
    assert md == [
        ("Caring for the Brass Kettle",),
        ("Caring for the Brass Kettle", "Descaling"),
        ("Caring for the Brass Kettle", "The Handle"),
    ]
    rst = [s.headings for s in split_sections(FOUNDRY)]
    assert rst == [
        ("Hartley Foundry",),
        ("Hartley Foundry", "Workers"),
        ("Hartley Foundry", "The Archive"),
    ]


def test_a_heading_inside_a_code_fence_is_not_a_section() -> None:
    text = "# Real\n\nText.\n\n```\n# not a heading\n```\n\nMore text.\n"
    assert [s.headings for s in split_sections(text)] == [("Real",)]


def test_chunks_are_exact_slices_within_the_size_bounds() -> None:
    text = KETTLES + "\n" + FOUNDRY
    pieces = chunk_document(text, min_tokens=20, max_tokens=80)
    assert len(pieces) >= 4
    for piece in pieces:
        assert text[piece.start : piece.end] == piece.text
        assert count_tokens(piece.text) <= 80
    # every word of the document lands in some chunk
    assert sum(len(p.text.split()) for p in pieces) == len(text.split())


def test_a_long_unbroken_text_is_cut_and_a_short_one_is_one_chunk() -> None:
    long = " ".join(f"word{i}" for i in range(1000))
    pieces = chunk_document(long, min_tokens=50, max_tokens=100)
    assert len(pieces) == 10 and all(count_tokens(p.text) <= 100 for p in pieces)
    assert [p.text for p in chunk_document("Just one line.", min_tokens=100, max_tokens=500)] == [
        "Just one line."
    ]
    assert chunk_document("   \n  ") == []
    with pytest.raises(ValueError, match="min_tokens"):
        chunk_document("x", min_tokens=10, max_tokens=5)


def test_headlines_are_found_in_order_on_their_own_lines() -> None:
    text = "Intro mentions Workers early.\nWorkers\nThey work.\nArchive\nPapers.\n"
    sections = sections_at(text, ["Workers", "Archive", "Workers"])
    starts = [text[s.start : s.end].split("\n")[0] for s in sections]
    # the heading line, not the earlier mention; a repeat with nothing after it is skipped
    assert starts == ["Intro mentions Workers early.", "Workers", "Archive"]
    assert [s.headings for s in sections] == [(), ("Workers",), ("Archive",)]


def test_keyphrases_entities_and_summary() -> None:
    phrases = keyphrases(KETTLES, max_num=8)
    assert 1 <= len(phrases) <= 8 and all("\n" not in p for p in phrases)
    assert any("Kettle" in p for p in phrases)
    names = entities(KETTLES + "\nUse ``kettle.boil()`` to start.")
    assert "Hartley Foundry" in names and "kettle.boil()" in names and "Leeds" in names
    summary = extractive_summary(KETTLES, max_sentences=2)
    assert 0 < len(summary) <= 600 and summary.split(". ")[0] in " ".join(KETTLES.split())


def test_language_detection_and_quotes() -> None:
    assert detect_language(KETTLES) == "english"
    assert detect_language(CHINESE) == "chinese"
    assert detect_language("Der Kessel ist nicht mit dem Wasser und die Katze") == "german"
    assert quote_in("Feed it every day  with\nequal weights", ["x", NO_HEADINGS]) == 1
    assert quote_in("Feed it twice a day", [NO_HEADINGS]) is None
    assert quote_in("ab", [NO_HEADINGS]) is None  # too short to prove anything


READ = (
    "To read a file's contents, call ``f.read(size)``, which reads some quantity of data and "
    "returns it as a string (in text mode) or bytes object (in binary mode)."
)


def test_a_near_verbatim_quote_is_located_and_the_contexts_own_words_are_kept():
    from assay.testset.text import locate_quote

    # the writer dropped a backquote pair and the comma: a slip, not a paraphrase
    slipped = "To read a file's contents, call `f.read(size)` which reads some quantity of data"
    found = locate_quote(slipped, ["unrelated text", READ])
    assert found is not None
    index, span, similarity = found
    assert index == 1 and 95 <= similarity < 100
    assert span in READ and span.startswith("To read a file's contents, call ``f.read(size)``,")
    assert quote_in(slipped, [READ]) is None  # quote_in still asks for an exact copy


def test_a_paraphrase_or_a_changed_fact_is_not_evidence():
    from assay.testset.text import locate_quote

    assert locate_quote("Python reads a whole file with the read method of f", [READ]) is None
    assert locate_quote("To read a file's contents, call ``f.readline()``", [READ]) is None
    assert locate_quote("call ``f.read(sise)``", [READ]) is None  # short: exact copies only
    exact = locate_quote("returns it as a string  (in text mode)", [READ])
    assert exact == (0, "returns it as a string (in text mode)", 100.0)


def test_a_long_wrapped_paragraph_is_cut_at_sentence_ends_not_mid_sentence():
    from assay.testset.text import chunk_document

    sentence = "This wrapped sentence has\nseveral words on each of its\nlines and then it ends. "
    text = "Title\n=====\n\n" + sentence * 60
    pieces = chunk_document(text, min_tokens=20, max_tokens=120)
    assert len(pieces) > 2
    for piece in pieces[1:]:
        assert piece.text.lstrip().startswith("This wrapped sentence"), piece.text[:40]
