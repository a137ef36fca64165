"""docs/review-conditions.md's table of `score_label` / `score` conditions, run as written against
the real server (SQLite and PostgreSQL) over traces with known typed scores: each condition
selects the traces the table says, and the refused example is a 422 with the quoted message."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "review-conditions.md"


def doc_conditions() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Scores: numbers and labels", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def test_the_documented_score_label_conditions_select_what_they_say(live):
    with live.client(live.key()) as api:
        names = ["curt", "rude", "calm", "number", "unscored", "skipped", "relabelled"]
        ids = {name: str(uuid.uuid4()) for name in names}
        sent = api.post(
            "/traces",
            json={"traces": [{"id": i, "input": "q", "output": n} for n, i in ids.items()]},
        )
        assert sent.status_code == 202, sent.text

        def scores(*items):
            body = {"scores": [{"trace_id": ids[n], "criterion": c, **v} for n, c, v in items]}
            answer = api.post("/traces/scores", json=body)
            assert answer.status_code == 201, answer.text

        scores(
            ("curt", "tone", {"value": "curt"}),
            ("rude", "tone", {"value": "rude"}),
            ("calm", "tone", {"value": "Calm"}),
            ("number", "tone", {"value": 0.4}),
            ("skipped", "tone", {"status": "skipped", "reason": "no answer"}),
            ("relabelled", "tone", {"value": "curt"}),
            ("curt", "helpful", {"value": True}),
            ("rude", "helpful", {"value": False}),
            ("number", "helpful", {"value": 1}),
        )
        scores(("relabelled", "tone", {"value": 0.9}))  # later: the latest tone is a number

        expected = {
            "score_label.tone = 'curt'": {"curt"},
            "score_label.tone IN ('curt', 'rude')": {"curt", "rude"},
            "score_label.tone ILIKE 'c%'": {"curt", "calm"},
            "score_label.tone IS NULL": {"number", "unscored", "skipped", "relabelled"},
            "score.helpful = 1": {"curt", "number"},
        }
        assert doc_conditions() == list(expected)
        by_id = {i: n for n, i in ids.items()}
        for condition, names_matching in expected.items():
            answer = api.get("/traces", params={"condition": condition, "limit": 100})
            assert answer.status_code == 200, (condition, answer.text)
            got = {by_id[t["id"]] for t in answer.json()["items"] if t["id"] in by_id}
            assert got == names_matching, condition

        refused = api.get("/traces", params={"condition": "score_label.tone = 1"})
        assert refused.status_code == 422
        assert (
            "score_label.tone holds text: compare it with a 'quoted string'"
            in (refused.json()["error"]["message"])
        )
        assert "`score_label.tone = 1`" in DOC.read_text(encoding="utf-8")
