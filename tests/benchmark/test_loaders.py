"""Each loader on its real file, read in place from ../shared/data/metaeval."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from assay.benchmark.bfcl import load_bfcl
from assay.benchmark.loaders import (
    load_ares,
    load_begin,
    load_halueval_qa,
    load_ragchecker,
    load_wikieval,
)
from assay.errors import UsageError
from assay.schema.dataset import EvaluationDataset


def _first_jsonl(path):
    with path.open(encoding="utf-8") as handle:
        return json.loads(handle.readline())


def test_wikieval_pairs_per_aspect(metaeval_dir):
    record = _first_jsonl(metaeval_dir / "wikieval" / "wikieval_pairs.jsonl")
    data = load_wikieval(metaeval_dir, "faithfulness", limit=2)
    assert data.kind == "pairwise" and data.split == "test"
    assert data.pairs == [(0, 1), (2, 3)] and data.n_units == 2 and len(data.rows) == 4
    assert data.rows[0] == {
        "user_input": record["question"],
        "retrieved_contexts": [record["context_v1"]],
        "response": record["answer"],
    }
    assert data.rows[1]["response"] == record["ungrounded_answer"]
    assert (
        load_wikieval(metaeval_dir, "answer_relevance", limit=1).rows[1]["response"]
        == record["poor_answer"]
    )
    context = load_wikieval(metaeval_dir, "context_relevance", limit=1)
    assert context.rows[0]["retrieved_contexts"] == [record["context_v1"]]
    assert context.rows[1]["retrieved_contexts"] == [record["context_v2"]]
    assert context.rows[0]["reference"] == record["answer"] == context.rows[1]["response"]
    assert load_wikieval(metaeval_dir, "faithfulness").n_units == 50
    with pytest.raises(UsageError, match="no 'dev' split"):
        load_wikieval(metaeval_dir, "faithfulness", split="dev")


def test_ares_labels_and_stratified_limit(metaeval_dir):
    counts = {
        aspect: sum(load_ares(metaeval_dir, aspect).labels)
        for aspect in ("context_relevance", "faithfulness", "answer_relevance")
    }
    assert counts == {"context_relevance": 98, "faithfulness": 172, "answer_relevance": 179}
    data = load_ares(metaeval_dir, "faithfulness", limit=20, seed=0)
    assert len(data.rows) == 20 and Counter(data.labels) == {1: 17, 0: 3}
    assert (
        data.rows[0]["user_input"]
        and len(data.rows[0]["retrieved_contexts"]) == 1
        and data.rows[0]["response"]
    )
    assert load_ares(metaeval_dir, "faithfulness", limit=20, seed=0).ids == data.ids


def test_begin_splits_drop_generic_and_sample(metaeval_dir):
    dev = load_begin(metaeval_dir, split="dev")
    assert len(dev.rows) == 430 and sum(dev.labels) == 180
    test = load_begin(metaeval_dir, split="test")
    assert len(test.rows) == 3601 and sum(test.labels) == 1392  # 6 Generic rows dropped
    assert "6 Generic" in test.notes[0]
    sample = load_begin(metaeval_dir, split="test", limit=300, seed=0)
    # 300 * 1392 / 3601 = 115.97 -> 116 attributable, 184 not
    assert len(sample.rows) == 300 and sum(sample.labels) == 116
    assert sample.ids == load_begin(metaeval_dir, split="test", limit=300, seed=0).ids
    first = dev.rows[0]
    assert first["retrieved_contexts"][0].startswith(
        "originally an industrial pigment supply company"
    )
    assert first["response"].startswith("crayola shifted its focus") and dev.labels[0] == 1


def test_halueval_qa_dev_is_the_first_100_pairs(metaeval_dir):
    dev = load_halueval_qa(metaeval_dir, split="dev")
    test = load_halueval_qa(metaeval_dir, split="test", limit=3)
    assert dev.n_units == 100 and len(dev.rows) == 200
    assert dev.rows[0]["response"] == "Arthur's Magazine"
    assert dev.rows[1]["response"] == "First for Women was started first."
    assert dev.rows[0]["retrieved_contexts"][0].startswith("Arthur's Magazine (1844")
    assert test.ids[0] == "halueval-qa-100-right_answer" and test.pairs == [(0, 1), (2, 3), (4, 5)]
    assert load_halueval_qa(metaeval_dir, split="test").n_units == 400


def test_ragchecker_two_annotators_per_instance(metaeval_dir):
    data = load_ragchecker(metaeval_dir, limit=5)
    assert data.kind == "graded" and data.n_units == 5 and len(data.rows) == 10
    pair = data.graded[0]
    assert (pair.first, pair.second) == (0, 1)
    assert set(pair.labels) == {"correctness", "completeness", "overall"}
    assert all(
        len(values) == 2 and all(-2 <= v <= 2 for v in values) for values in pair.labels.values()
    )
    assert (
        data.rows[0]["reference"] == data.rows[1]["reference"]
        and data.rows[0]["response"] != data.rows[1]["response"]
    )
    assert load_ragchecker(metaeval_dir, split="all").n_units == 280


def test_ragchecker_dev_is_the_last_fifth_of_each_source_data_set(metaeval_dir):
    records = json.loads((metaeval_dir / "ragchecker" / "human_labeled_data.json").read_text())
    dataset_of = {r["instance_id"]: r["dataset"] for r in records}
    instances = lambda data: [int(row_id.split("-")[1]) for row_id in data.ids[::2]]  # noqa: E731
    dev = instances(load_ragchecker(metaeval_dir, split="dev"))
    test = instances(load_ragchecker(metaeval_dir, split="test"))
    assert not set(dev) & set(test) and len(dev) + len(test) == 280
    for dataset in set(dataset_of.values()):
        members = sorted(i for i, d in dataset_of.items() if d == dataset)
        chosen = sorted(i for i in dev if dataset_of[i] == dataset)
        assert chosen == members[len(members) - math.ceil(len(members) / 5) :]  # last fifth
    # a limit deals from the split's own instances only
    assert set(instances(load_ragchecker(metaeval_dir, split="test", limit=50))) <= set(test)


def test_ragchecker_limit_covers_every_source_data_set(metaeval_dir):
    # the file holds kiwi's 28 instances first; a limit takes from each data set in turn
    records = json.loads((metaeval_dir / "ragchecker" / "human_labeled_data.json").read_text())
    dataset_of = {r["instance_id"]: r["dataset"] for r in records}
    everything = {
        dataset_of[int(i.split("-")[1])] for i in load_ragchecker(metaeval_dir, split="all").ids
    }
    data = load_ragchecker(metaeval_dir, limit=len(everything))
    taken = [dataset_of[int(row_id.split("-")[1])] for row_id in data.ids[::2]]
    assert sorted(taken) == sorted(everything)  # one instance from each, none twice
    first = load_ragchecker(metaeval_dir, limit=2 * len(everything))
    assert first.ids[: len(data.ids)] == data.ids  # a larger limit extends a smaller one


def test_bfcl_variants_are_deterministic_corruptions(metaeval_dir):
    data = load_bfcl(metaeval_dir, limit=1)
    assert data.n_units == 6  # the first case of each of the six categories
    rows = dict(zip(data.ids, data.rows, strict=True))
    labels = dict(zip(data.ids, data.labels, strict=True))
    made = {key: rows[key]["user_input"][-1].get("tool_calls") for key in rows}
    # simple_python_0 expects calculate_triangle_area(base=10, height=5, unit="units" or omitted)
    reference = [
        {"name": "calculate_triangle_area", "args": {"base": 10, "height": 5, "unit": "units"}}
    ]
    assert rows["simple_python_0-canonical"]["reference_tool_calls"] == reference
    assert (
        made["simple_python_0-canonical"] == reference and labels["simple_python_0-canonical"] == 1
    )
    assert made["simple_python_0-omitted_optional"][0]["args"] == {"base": 10, "height": 5}
    assert (
        made["simple_python_0-wrong_value"][0]["args"]["base"] == 11
        and labels["simple_python_0-wrong_value"] == 0
    )
    assert "base" not in made["simple_python_0-missing_argument"][0]["args"]
    assert made["simple_python_0-missing_call"] is None
    assert made["simple_python_0-extra_call"] == reference * 2
    # parallel_0: two spotify.play calls; reversing them is still acceptable
    assert [c["args"]["artist"] for c in made["parallel_0-swapped_order"]] == [
        "Maroon 5",
        "Taylor Swift",
    ]
    assert labels["parallel_0-swapped_order"] == 1
    assert labels["irrelevance_0-no_call"] == 1 and labels["irrelevance_0-call_when_none"] == 0
    assert made["irrelevance_0-call_when_none"] == [
        {"name": "determine_body_mass_index", "args": {"weight": 1.0, "height": 1.0}}
    ]
    assert load_bfcl(metaeval_dir, limit=1).rows == data.rows
    assert EvaluationDataset.from_list(data.rows).kind == "multi_turn"
