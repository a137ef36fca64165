"""A review queue's export carries each criterion's latest score typed as it is stored: a number
(a boolean as 1.0/0.0) in `score`, a categorical label in `score_label` (with `score` None), the
status and reason beside them, and the reviewer's comment as `label_comment`; the library's
`load_labels` reads the export as before, now with the comment as the reason and the judge's
reason. Against the real server on SQLite and PostgreSQL, through the API and the SDK."""

from __future__ import annotations

import json
import uuid

import assay.platform as ragmetrics
from assay.alignment import load_labels
from assay.platform import ReviewQueue

CRITERIA = ["Tone", "Quality", "Helpful", "Broken", "Unscored"]


def test_the_export_keeps_each_kind_of_score_and_the_loader_reads_it(live, tmp_path):
    key = live.key()
    trace_id = str(uuid.uuid4())
    with live.client(key) as api:
        made = api.post("/review-queues", json={"name": "Typed", "criteria": CRITERIA})
        assert made.status_code == 201, made.text
        sent = api.post(
            "/traces",
            json={"traces": [{"id": trace_id, "input": "Capital of France?", "output": "Paris."}]},
        )
        assert sent.status_code == 202, sent.text
        scores = [
            {"criterion": "Tone", "value": "curt", "reason": "two words"},
            {"criterion": "Quality", "value": 0.8, "reason": "correct, no detail"},
            {"criterion": "Helpful", "value": True},
            {"criterion": "Broken", "status": "error", "reason": "Timeout: the judge timed out"},
        ]
        stored = api.post(
            "/traces/scores", json={"scores": [{"trace_id": trace_id, **s} for s in scores]}
        )
        assert stored.status_code == 201, stored.text
        for criterion, value in zip(CRITERIA, ["polite", 1, True, "yes", "fine"], strict=True):
            label = {
                "criterion": criterion,
                "value": value,
                "queue": "Typed",
                "comment": f"why {criterion}",
            }
            assert api.post(f"/traces/{trace_id}/labels", json=label).status_code == 201
        page = api.get("/review-queues/Typed/export").json()

    rows = {r["criterion"]: r for r in page["rows"]}
    assert sorted(rows) == sorted(CRITERIA)
    assert {c: rows[c]["label_comment"] for c in CRITERIA} == {c: f"why {c}" for c in CRITERIA}

    def score_fields(criterion):
        row = rows[criterion]
        return (row["score"], row["score_label"], row["score_status"], row["score_reason"])

    assert score_fields("Tone") == (None, "curt", "ok", "two words")
    assert score_fields("Quality") == (0.8, None, "ok", "correct, no detail")
    assert score_fields("Helpful") == (1.0, None, "ok", None)
    assert score_fields("Broken") == (None, None, "error", "Timeout: the judge timed out")
    assert score_fields("Unscored") == (None, None, None, None)
    assert rows["Unscored"]["score_source"] is None
    assert rows["Tone"]["score_source"].startswith("key:")

    # the SDK's export is the same rows
    assert ragmetrics.login(key, base_url=live.base_url) is True
    assert ReviewQueue.download(name="Typed").export() == page["rows"]

    (tmp_path / "typed.json").write_text(json.dumps(page))
    quality = load_labels(tmp_path / "typed.json", criterion="Quality")
    (example,) = quality
    assert example.label == 1 and example.judge_value == 0.8
    assert example.reason == "why Quality" and example.judge_reason == "correct, no detail"
    (broken,) = load_labels(tmp_path / "typed.json", criterion="Broken")
    assert broken.judge_value is None and broken.judge_reason is None  # a failed score is no value
    (tone,) = load_labels(tmp_path / "typed.json", criterion="Tone")
    assert tone.label == "polite" and tone.fields["response"] == "Paris."
