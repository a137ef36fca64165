"""Loaders for the RAG suites: each reads its files in place and returns `SuiteData`.

`limit` keeps the first N pairs/instances of pairwise and graded suites (RAGChecker's dealt
evenly from its source data sets), and a stratified sample of N items (seeded) of binary ones, so
a small run still has both classes.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.benchmark.suites import GradedPair, SuiteData, check_split, stratified_sample, suite_file
from assay.errors import DataError


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"not JSON: {exc}", file=str(path), row=number) from None
    return rows


def _tsv(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)  # ARES documents run to tens of kilobytes
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _need(row: dict[str, Any], fields: tuple[str, ...], path: Path, number: int) -> None:
    for name in fields:
        if not isinstance(row.get(name), str):
            raise DataError(f"expected a text field {name!r}", file=str(path), row=number)


# -- WikiEval: three kinds of constructed pairs over the same 50 questions -------------------------
WIKIEVAL_PAIRS: dict[str, tuple[str, str]] = {
    "faithfulness": ("answer", "ungrounded_answer"),
    "answer_relevance": ("answer", "poor_answer"),
    "context_relevance": ("context_v1", "context_v2"),
}


def load_wikieval(
    root: Path, aspect: str, split: str = "test", limit: int | None = None, seed: int = 0
) -> SuiteData:
    """Faithfulness: answer vs ungrounded_answer, both over context_v1. Answer relevance: answer vs
    poor_answer. Context relevance: context_v1 vs context_v2, with the answer as response and
    reference. The first member of each pair is the one people prefer (by construction)."""
    check_split("wikieval", split)
    path = suite_file(root, "wikieval", "wikieval_pairs.jsonl")
    records = _jsonl(path)
    fields = ("question", "context_v1", "context_v2", "answer", "ungrounded_answer", "poor_answer")
    for number, record in enumerate(records, start=1):
        _need(record, fields, path, number)
    records = records[:limit] if limit is not None else records
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    pairs: list[tuple[int, int]] = []
    for record in records:
        base = {"user_input": record["question"]}
        made = []
        for member in WIKIEVAL_PAIRS[aspect]:
            if aspect == "context_relevance":
                row = {
                    **base,
                    "retrieved_contexts": [record[member]],
                    "response": record["answer"],
                    "reference": record["answer"],
                }
            else:
                row = {
                    **base,
                    "retrieved_contexts": [record["context_v1"]],
                    "response": record[member],
                }
            made.append(len(rows))
            ids.append(f"wikieval-{record.get('id', len(pairs))}-{member}")
            rows.append(row)
        pairs.append((made[0], made[1]))
    return SuiteData(
        "wikieval",
        aspect,
        split,
        "pairwise",
        rows,
        ids,
        len(pairs),
        [str(path.relative_to(root))],
        pairs=pairs,
        notes=[f"preferred member: {WIKIEVAL_PAIRS[aspect][0]}"],
    )


# -- ARES: one row, three binary human labels ------------------------------------------------------
ARES_LABELS = {
    "context_relevance": "Context_Relevance_Label",
    "faithfulness": "Answer_Faithfulness_Label",
    "answer_relevance": "Answer_Relevance_Label",
}


def load_ares(
    root: Path, aspect: str, split: str = "test", limit: int | None = None, seed: int = 0
) -> SuiteData:
    """Each row as (Question, [Document], Answer); label = the row's human label for `aspect`."""
    check_split("ares", split)
    path = suite_file(root, "ares", "LLM_Judge_Test_Set_Human_Annotations.tsv")
    records = _tsv(path)
    column = ARES_LABELS[aspect]
    labels = []
    for number, record in enumerate(records, start=2):  # line 1 is the header
        _need(record, ("Question", "Document", "Answer"), path, number)
        if record.get(column) not in ("0", "1"):
            raise DataError(
                f"{column} must be 0 or 1, got {record.get(column)!r}", file=str(path), row=number
            )
        labels.append(int(record[column]))
    keep = (
        stratified_sample(labels, limit, seed) if limit is not None else list(range(len(records)))
    )
    rows = [
        {
            "user_input": records[i]["Question"],
            "retrieved_contexts": [records[i]["Document"]],
            "response": records[i]["Answer"],
        }
        for i in keep
    ]
    return SuiteData(
        "ares",
        aspect,
        split,
        "binary",
        rows,
        [f"ares-{i}" for i in keep],
        len(keep),
        [str(path.relative_to(root))],
        labels=[labels[i] for i in keep],
        notes=[f"label column {column}"],
    )


# -- BEGIN (Wizard of Wikipedia): is the response attributable to the knowledge? --------------------
BEGIN_FILES = {"dev": "begin_dev_wow.tsv", "test": "begin_test_wow.tsv"}
BEGIN_LABELS = {"Fully attributable": 1, "Not fully attributable": 0}


def load_begin(
    root: Path,
    aspect: str = "faithfulness",
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
) -> SuiteData:
    """(message, [knowledge], response); 1 = fully attributable, 0 = not; Generic rows dropped."""
    check_split("begin", split)
    path = suite_file(root, "begin", BEGIN_FILES[split])
    kept: list[tuple[int, dict[str, str]]] = []
    generic = 0
    for number, record in enumerate(_tsv(path), start=2):
        _need(record, ("knowledge", "message", "response", "begin_label"), path, number)
        if record["begin_label"] == "Generic":
            generic += 1
            continue
        if record["begin_label"] not in BEGIN_LABELS:
            raise DataError(
                f"unknown begin_label {record['begin_label']!r}", file=str(path), row=number
            )
        kept.append((number, record))
    labels = [BEGIN_LABELS[record["begin_label"]] for _, record in kept]
    keep = stratified_sample(labels, limit, seed) if limit is not None else list(range(len(kept)))
    rows = [
        {
            "user_input": kept[i][1]["message"],
            "retrieved_contexts": [kept[i][1]["knowledge"]],
            "response": kept[i][1]["response"],
        }
        for i in keep
    ]
    notes = [f"{generic} Generic row(s) dropped"]
    if limit is not None:
        notes.append(f"stratified sample of {len(keep)} of {len(kept)} (seed {seed})")
    return SuiteData(
        "begin",
        aspect,
        split,
        "binary",
        rows,
        [f"begin-{split}-line{kept[i][0]}" for i in keep],
        len(keep),
        [str(path.relative_to(root))],
        labels=[labels[i] for i in keep],
        notes=notes,
    )


# -- HaluEval QA: right answer vs hallucinated answer over the same knowledge -----------------------
HALUEVAL_DEV = 100  # the first 100 pairs are for tuning; the other 400 for reporting


def load_halueval_qa(
    root: Path,
    aspect: str = "faithfulness",
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
) -> SuiteData:
    check_split("halueval-qa", split)
    path = suite_file(root, "halueval-qa", "qa_one-turn_data.json")
    records = _jsonl(path)
    for number, record in enumerate(records, start=1):
        _need(
            record, ("knowledge", "question", "right_answer", "hallucinated_answer"), path, number
        )
    offset = 0 if split == "dev" else HALUEVAL_DEV
    chosen = records[:HALUEVAL_DEV] if split == "dev" else records[HALUEVAL_DEV:]
    chosen = chosen[:limit] if limit is not None else chosen
    rows, ids, pairs = [], [], []
    for position, record in enumerate(chosen):
        for member in ("right_answer", "hallucinated_answer"):
            ids.append(f"halueval-qa-{offset + position}-{member}")
            rows.append(
                {
                    "user_input": record["question"],
                    "retrieved_contexts": [record["knowledge"]],
                    "response": record[member],
                }
            )
        pairs.append((len(rows) - 2, len(rows) - 1))
    return SuiteData(
        "halueval-qa",
        aspect,
        split,
        "pairwise",
        rows,
        ids,
        len(pairs),
        [str(path.relative_to(root))],
        pairs=pairs,
        notes=[f"pairs {offset + 1}-{offset + len(pairs)} of the file"],
    )


# -- RAGChecker: graded human preference between two responses ------------------------------------
RAGCHECKER_LABELS = ("correctness", "completeness", "overall")


def ragchecker_instances(path: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(first record, all records) per instance_id, in order of first appearance."""
    records = json.loads(path.read_text(encoding="utf-8"))
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for number, record in enumerate(records, start=1):
        if not all(
            key in record for key in ("instance_id", "query", "gt_answer", "model1", "model2")
        ):
            raise DataError(
                "expected instance_id, query, gt_answer, model1, model2", file=str(path), row=number
            )
        grouped.setdefault(record["instance_id"], []).append(record)
    return [(group[0], group) for group in grouped.values()]


def across_datasets(
    instances: list[tuple[dict[str, Any], list[dict[str, Any]]]],
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Pure: the instances dealt round-robin from each source data set (kiwi, clapnq, the robustqa
    domains, novelqa), each in file order. The file holds them data set after data set, so the
    first N of this order, unlike the file's, cover every data set."""
    by_dataset: dict[Any, list[tuple[dict[str, Any], list[dict[str, Any]]]]] = {}
    for instance in instances:
        by_dataset.setdefault(instance[0].get("dataset"), []).append(instance)
    queues = list(by_dataset.values())
    dealt: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for index in range(max((len(q) for q in queues), default=0)):
        dealt.extend(queue[index] for queue in queues if index < len(queue))
    return dealt


RAGCHECKER_DEV_SHARE = 5  # the last fifth (rounded up) of each source data set is for tuning


def ragchecker_split(
    instances: list[tuple[dict[str, Any], list[dict[str, Any]]]], split: str
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Pure: the instances of `split`, in file order. "dev" is the last fifth (rounded up) of each
    source data set, "test" the rest, "all" everything (the paper's 280, for reproducing its
    figures; a metric tuned on dev must not report on it)."""
    if split == "all":
        return instances
    by_dataset: dict[Any, list[int]] = {}
    for position, instance in enumerate(instances):
        by_dataset.setdefault(instance[0].get("dataset"), []).append(position)
    dev = {
        position
        for positions in by_dataset.values()
        for position in positions[
            len(positions) - math.ceil(len(positions) / RAGCHECKER_DEV_SHARE) :
        ]
    }
    wanted = split == "dev"
    return [instance for i, instance in enumerate(instances) if (i in dev) == wanted]


def load_ragchecker(
    root: Path,
    aspect: str = "preference",
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
) -> SuiteData:
    """Two rows per instance, (query, model_i response, reference = gt_answer); labels: each
    annotator's correctness / completeness / overall preference for model2 (-2..2). `split` is
    dev, test or all (`ragchecker_split`); `limit` takes N instances dealt evenly from the source
    data sets (`across_datasets`)."""
    check_split("ragchecker", split)
    path = suite_file(root, "ragchecker", "human_labeled_data.json")
    instances = ragchecker_split(ragchecker_instances(path), split)
    instances = across_datasets(instances)[:limit] if limit is not None else instances
    rows, ids, graded = [], [], []
    for first, group in instances:
        for member in ("model1", "model2"):
            ids.append(f"ragchecker-{first['instance_id']}-{member}")
            rows.append(
                {
                    "user_input": first["query"],
                    "response": first[member]["response"],
                    "reference": first["gt_answer"],
                }
            )
        labels = {
            name: [float(record[f"{name}_label"]) for record in group] for name in RAGCHECKER_LABELS
        }
        graded.append(GradedPair(len(rows) - 2, len(rows) - 1, labels))
    return SuiteData(
        "ragchecker",
        aspect,
        split,
        "graded",
        rows,
        ids,
        len(graded),
        [str(path.relative_to(root))],
        graded=graded,
        notes=["positive label: model2 preferred; one row per annotator in r"],
    )


def ragchecker_baseline_scores(root: Path, data: SuiteData) -> dict[str, list[float]]:
    """RAGChecker's own per-response scores (baseline_ragchecker.json), aligned with `data.rows`,
    one list per label name: the known answer the correlation code must reproduce."""
    path = suite_file(root, "ragchecker", "baseline_ragchecker.json")
    by_id = {
        record["instance_id"]: record for record in json.loads(path.read_text(encoding="utf-8"))
    }
    scores: dict[str, list[float]] = {name: [0.0] * len(data.rows) for name in RAGCHECKER_LABELS}
    for row_id, index in zip(data.ids, range(len(data.rows)), strict=True):
        _, instance, member = row_id.split("-")
        record = by_id[int(instance)]
        for name in RAGCHECKER_LABELS:
            scores[name][index] = float(record[member]["ragchecker"][f"{name}_label"])
    return scores


Loader = Callable[..., SuiteData]


def loaders() -> dict[str, Loader]:
    from assay.benchmark.bfcl import load_bfcl
    from assay.benchmark.constructed import load_ragchecker_relevance

    return {
        "wikieval": load_wikieval,
        "ares": load_ares,
        "begin": load_begin,
        "halueval-qa": load_halueval_qa,
        "ragchecker": load_ragchecker,
        "ragchecker-relevance": load_ragchecker_relevance,
        "bfcl": load_bfcl,
    }


__all__ = [
    "ARES_LABELS",
    "HALUEVAL_DEV",
    "RAGCHECKER_LABELS",
    "WIKIEVAL_PAIRS",
    "across_datasets",
    "load_ares",
    "load_begin",
    "load_halueval_qa",
    "load_ragchecker",
    "load_wikieval",
    "loaders",
    "ragchecker_baseline_scores",
    "ragchecker_instances",
    "ragchecker_split",
]
