"""Constructed answer-relevance pairs built from RAGChecker's responses (suite `ragchecker-relevance`).

No public data set has a dev split for answer relevance with enough poor answers to measure a lever
on (ARES has 21 irrelevant answers in 200 rows and no dev split; RAGChecker's human preferences are
between two responses that both answer the question). WikiEval's poor answers were made by asking a
model for incomplete or padded answers; this suite makes the same two kinds deterministically, with
no model, from the long-form responses of a RAGChecker split:

- incomplete: a response against its own first half (cut after the middle sentence);
- padded: a response against itself followed by the opening sentences of a response to another
  question (taken from another source data set, so the topic differs).

In each pair the untouched response is the preferred member. It inherits RAGChecker's dev / test
split (`ragchecker_split`), so a lever can be chosen on dev and checked on test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.benchmark.loaders import across_datasets, ragchecker_instances, ragchecker_split
from assay.benchmark.suites import SuiteData, check_split, suite_file
from assay.metrics.text import split_sentences

MIN_SENTENCES = 4  # a shorter response has no meaningful half
PADDING_SENTENCES = 2  # sentences borrowed from another question's response


def first_half(text: str) -> str | None:
    """Pure: `text` cut after its middle sentence, formatting kept; None when it has fewer than
    `MIN_SENTENCES` sentences."""
    sentences = split_sentences(text)
    if len(sentences) < MIN_SENTENCES:
        return None
    end = 0
    for sentence in sentences[: len(sentences) // 2]:
        found = text.find(sentence, end)
        if found < 0:  # the splitter changed the sentence's text: fall back to joining
            return " ".join(sentences[: len(sentences) // 2])
        end = found + len(sentence)
    return text[:end].rstrip()


def padded(text: str, donor: str) -> str:
    """Pure: `text` followed by the first `PADDING_SENTENCES` sentences of `donor`."""
    borrowed = " ".join(split_sentences(donor)[:PADDING_SENTENCES])
    return f"{text.rstrip()}\n\n{borrowed}"


def load_ragchecker_relevance(
    root: Path,
    aspect: str = "answer_relevance",
    split: str = "dev",
    limit: int | None = None,
    seed: int = 0,
) -> SuiteData:
    """Pairwise rows (question, response) from the responses of RAGChecker `split` with at least
    `MIN_SENTENCES` sentences, in the order dealt across source data sets; `limit` keeps the first
    N responses (each gives an incomplete and a padded pair)."""
    check_split("ragchecker-relevance", split)
    path = suite_file(root, "ragchecker-relevance", "human_labeled_data.json")
    instances = across_datasets(ragchecker_split(ragchecker_instances(path), split))
    responses: list[tuple[str, str, str, Any]] = []  # (id, query, response, data set)
    for first, _ in instances:
        for member in ("model1", "model2"):
            text = first[member]["response"]
            if first_half(text) is not None:
                responses.append(
                    (f"{first['instance_id']}-{member}", first["query"], text, first.get("dataset"))
                )
    chosen = responses[:limit] if limit is not None else responses
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    pairs: list[tuple[int, int]] = []

    def add(row_id: str, query: str, response: str) -> int:
        ids.append(f"ragchecker-relevance-{row_id}")
        rows.append({"user_input": query, "response": response})
        return len(rows) - 1

    for position, (row_id, query, text, dataset) in enumerate(chosen):
        whole = add(row_id, query, text)
        pairs.append((whole, add(f"{row_id}-incomplete", query, first_half(text) or "")))
        donor = _donor(responses, position, dataset)
        pairs.append((whole, add(f"{row_id}-padded", query, padded(text, donor))))
    return SuiteData(
        "ragchecker-relevance",
        aspect,
        split,
        "pairwise",
        rows,
        ids,
        len(pairs),
        [str(path.relative_to(root))],
        pairs=pairs,
        notes=[
            "constructed from RAGChecker responses: each whole response is preferred over its "
            "first half (incomplete) and over itself padded with another question's sentences"
        ],
    )


def _donor(responses: list[tuple[str, str, str, Any]], position: int, dataset: Any) -> str:
    """Pure: the first response after `position` (wrapping round) from another source data set,
    so the padding is about another topic; the next response when every one shares the data set."""
    count = len(responses)
    for step in range(1, count):
        candidate = responses[(position + step) % count]
        if candidate[3] != dataset:
            return candidate[2]
    return responses[(position + 1) % count][2] if count > 1 else ""


__all__ = ["first_half", "load_ragchecker_relevance", "padded"]
