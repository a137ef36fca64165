"""Labels in (rows, Ragas annotations, review-queue exports) and the grouped, stratified split."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.alignment import (
    LabeledExample,
    LabeledSet,
    MetricAnnotation,
    from_review_export,
    from_rows,
    load_labels,
    train_test_split,
)
from assay.errors import DataError, UsageError


def test_jsonl_rows_with_legacy_columns_reason_and_group(tmp_path):
    path = tmp_path / "labels.jsonl"
    rows = [
        {
            "id": "a",
            "question": "Q1",
            "answer": "A1",
            "contexts": ["C1"],
            "label": 1,
            "reason": "ok",
            "doc": "d1",
        },
        {"id": "b", "question": "Q2", "answer": "A2", "contexts": ["C2"], "label": 0, "doc": "d1"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    data = load_labels(path, group_column="doc")
    assert [e.id for e in data] == ["a", "b"]
    assert data[0].fields == {"user_input": "Q1", "response": "A1", "retrieved_contexts": ["C1"]}
    assert data[0].label == 1 and data[0].reason == "ok" and data[0].group == "d1"
    assert data[1].reason is None
    assert data.label_counts() == {"1": 1, "0": 1}


def test_csv_cells_are_decoded_and_extra_columns_kept_for_templates(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(
        "response,retrieved_contexts,grading_notes,human_label\n"
        'Paris,"[""Paris is the capital.""]",must say Paris,pass\n'
        'Rome,"[""Rome is in Italy.""]",must say Rome,1\n'
    )
    data = load_labels(path)
    assert data[0].fields["retrieved_contexts"] == ["Paris is the capital."]
    assert data[0].fields["grading_notes"] == "must say Paris"
    assert data[0].label == "pass"
    assert data[1].label == 1  # "1" read as JSON
    assert data[0].id == "row2"  # CSV rows are numbered like the file's lines


def test_a_row_without_a_label_names_its_row_and_field(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps({"response": "x", "label": 1}) + "\n" + json.dumps({"response": "y"}) + "\n"
    )
    with pytest.raises(DataError) as caught:
        load_labels(path)
    assert "row 2" in str(caught.value) and "label" in str(caught.value)


def test_bad_json_line_names_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"response": "x", "label": 1}) + "\n{not json\n")
    with pytest.raises(DataError, match="row 2"):
        load_labels(path)


def test_unknown_suffix_is_refused(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text("x")
    with pytest.raises(UsageError, match=r"\.jsonl, \.csv or \.json"):
        load_labels(path)


def test_duplicate_ids_are_refused():
    with pytest.raises(DataError, match="appears 2 times"):
        from_rows([{"id": 1, "response": "a", "label": 1}, {"id": 1, "response": "b", "label": 0}])


RAGAS_FILE = {
    "faithfulness": [
        {
            "metric_input": {"response": "R1", "retrieved_contexts": ["C1"]},
            "metric_output": 1,
            "prompts": {
                "supported": {
                    "prompt_input": {"x": 1},
                    "prompt_output": {"v": 1},
                    "edited_output": None,
                }
            },
            "is_accepted": True,
        },
        {
            "metric_input": {"response": "R2", "retrieved_contexts": ["C2"]},
            "metric_output": 1,
            "prompts": {
                "supported": {
                    "prompt_input": {"x": 2},
                    "prompt_output": {"v": 1},
                    "edited_output": {"reason": "R2 invents a date"},
                }
            },
            "is_accepted": False,
        },
        {
            "metric_input": {"response": "R3", "retrieved_contexts": ["C3"]},
            "metric_output": 0.4,
            "is_accepted": False,
        },
        {
            "metric_input": {"response": "R4", "retrieved_contexts": ["C4"]},
            "metric_output": 0.4,
            "is_accepted": False,
            "target": 0.9,
        },
    ],
    "other": [],
}


def test_ragas_annotation_labels_accepted_flipped_target_and_dropped(tmp_path):
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps(RAGAS_FILE))
    data = load_labels(path, metric_name="faithfulness")
    assert [e.label for e in data] == [1, 0, 0.9]  # accepted, rejected yes/no flipped, target
    assert data[1].reason == "R2 invents a date"
    assert data.notes == ["1 rejected score(s) without a target left out"]
    annotation = MetricAnnotation.from_json(path, "faithfulness")
    assert len(annotation) == 4
    assert list(annotation.get_prompt_annotations()) == ["supported"]
    assert len(annotation.get_prompt_annotations()["supported"]) == 1  # accepted only
    assert [len(b) for b in annotation.batch(3)] == [3, 1]
    assert [len(b) for b in annotation.batch(3, drop_last_batch=True)] == [3]
    assert len(annotation.sample(2, stratify_key="is_accepted")) == 2
    with pytest.raises(UsageError, match="asked for 5"):
        annotation.sample(5)


def test_an_edited_verdict_is_the_reviewers_label():
    from assay.alignment import SingleMetricAnnotation

    def sample(accepted, output, edited):
        return {
            "metric_input": {"user_input": "q", "response": "r"},
            "metric_output": output,
            "prompts": {
                "single_turn_aspect_critic_prompt": {
                    "prompt_input": {"user_input": "q", "response": "r"},
                    "prompt_output": {"reason": "judge", "verdict": output},
                    "edited_output": edited,
                }
            },
            "is_accepted": accepted,
        }

    annotation = SingleMetricAnnotation(
        name="helpfulness",
        samples=[
            sample(True, 1, {"reason": "same, reworded", "verdict": 1}),  # Ragas' docs example
            sample(True, 1, {"reason": "not helpful after all", "verdict": 0}),
            sample(False, 4, {"reason": "a 2 at most", "verdict": 2}),  # a score, corrected
            sample(False, 4, None),  # a rejected score with nothing to go on
        ],
    )
    data = annotation.to_labeled()
    assert [e.label for e in data] == [1, 0, 2]
    assert [e.reason for e in data] == ["same, reworded", "not helpful after all", "a 2 at most"]
    assert data.notes == ["1 rejected score(s) without a target left out"]


def test_ragas_annotation_needs_a_metric_name_when_it_holds_several(tmp_path):
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps(RAGAS_FILE))
    with pytest.raises(UsageError, match="metric_name"):
        load_labels(path)
    with pytest.raises(UsageError, match="no annotations for 'nope'"):
        MetricAnnotation.from_json(path, "nope")
    with pytest.raises(UsageError, match=r"\.json"):
        MetricAnnotation.from_json(tmp_path / "x.jsonl")


def test_malformed_annotation_names_the_sample_and_field(tmp_path):
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps({"m": [{"metric_output": 1}]}))
    with pytest.raises(DataError) as caught:
        load_labels(path)
    assert "m[0]" in str(caught.value) and "metric_input" in str(caught.value)


EXPORT = {
    "rows": [
        {
            "trace_id": "t1",
            "input": "Where?",
            "output": "Paris",
            "contexts": ["Paris is nice"],
            "criterion": "grounded",
            "label": 1,
            "label_author": "ann",
            "score": 0.8,
            "score_source": "judge",
        },
        {"trace_id": "t1", "input": "Where?", "output": "Paris", "criterion": "polite", "label": 0},
        {
            "trace_id": "t2",
            "input": "Who?",
            "output": "Bob",
            "contexts": [],
            "criterion": "grounded",
            "label": 0,
        },
    ]
}


def test_review_export_rows(tmp_path):
    data = from_review_export(EXPORT, criterion="grounded")
    assert [e.group for e in data] == ["t1", "t2"]
    first = data[0]
    assert first.fields == {
        "user_input": "Where?",
        "response": "Paris",
        "retrieved_contexts": ["Paris is nice"],
    }
    assert (first.label, first.author, first.judge_value) == (1, "ann", 0.8)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(EXPORT))
    with pytest.raises(UsageError, match="several criteria"):
        load_labels(path)
    assert len(load_labels(path, criterion="polite")) == 1


def test_review_export_bad_contexts_name_the_row():
    bad = {
        "rows": [
            {"trace_id": "t", "output": "x", "contexts": "not a list", "criterion": "c", "label": 1}
        ]
    }
    with pytest.raises(DataError) as caught:
        from_review_export(bad)
    assert "contexts" in str(caught.value) and "index 0" in str(caught.value)


# -- the split ---------------------------------------------------------------------------------
def _rows(labels_and_groups):
    return LabeledSet(
        [
            LabeledExample(id=f"r{i}", fields={"response": f"x{i}"}, label=label, group=group)
            for i, (label, group) in enumerate(labels_and_groups)
        ]
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 1]), st.sampled_from([f"g{i}" for i in range(12)])),
        min_size=2,
        max_size=80,
    ),
    st.floats(min_value=0.1, max_value=0.9),
    st.integers(min_value=0, max_value=10_000),
)
def test_no_group_is_in_both_splits_and_nothing_is_lost(rows, test_size, seed):
    data = _rows(rows)
    if len({g for _, g in rows}) < 2:
        with pytest.raises(UsageError, match="at least 2 groups"):
            train_test_split(data, test_size, seed)
        return
    train, test = train_test_split(data, test_size, seed)
    assert {e.group for e in train}.isdisjoint({e.group for e in test})
    assert sorted(e.id for e in [*train, *test]) == sorted(e.id for e in data)
    assert len(train) and len(test)


def test_split_is_seeded_and_stratified():
    # 40 groups of 2 rows: 12 positive groups (24 rows), 28 negative (56 rows)
    rows = [(1 if g < 12 else 0, f"g{g}") for g in range(40) for _ in range(2)]
    data = _rows(rows)
    train, test = data.train_test_split(test_size=0.25, seed=3)
    again, _ = data.train_test_split(test_size=0.25, seed=3)
    other, _ = data.train_test_split(test_size=0.25, seed=4)
    assert [e.id for e in train] == [e.id for e in again]
    assert [e.id for e in train] != [e.id for e in other]
    counts = Counter(e.label for e in test)
    assert counts == {1: 6, 0: 14}  # 25% of each label, in whole groups


def test_rows_without_groups_are_their_own_groups():
    data = _rows([(i % 2, None) for i in range(10)])
    train, test = data.train_test_split(test_size=0.2, seed=1)
    assert len(train) == 8
    assert len(test) == 2 and Counter(e.label for e in test) == {0: 1, 1: 1}


def test_test_size_out_of_range_is_refused():
    with pytest.raises(UsageError, match="test_size"):
        _rows([(0, "a"), (1, "b")]).train_test_split(test_size=1.5)


def test_fields_are_validated_like_samples():
    with pytest.raises(DataError) as caught:
        from_rows([{"response": "x", "retrieved_contexts": "not a list", "label": 1}])
    assert "retrieved_contexts" in str(caught.value) and "index 0" in str(caught.value)
    conversation = from_rows(
        [
            {
                "user_input": [
                    {"type": "human", "content": "hi"},
                    {"type": "ai", "content": "hello"},
                ],
                "label": 1,
            }
        ]
    )
    assert type(conversation[0].fields["user_input"][0]).__name__ == "HumanMessage"
