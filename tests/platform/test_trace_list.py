"""The traces list answers a summary per trace, a few hundred bytes whatever the trace holds, and
whole traces only when asked (`full=true`, or `GET /traces/{id}`); on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid

SUMMARY_FIELDS = {
    "object_type",
    "id",
    "created_at",
    "version",
    "edited",
    "model",
    "session_id",
    "latency_ms",
    "usage",
    "tokens",
    "cost",
    "status",
    "error",
    "input",
    "output",
    "truncated",
    "tags",
    "scores",
    "labels",
}


def big_trace(n: int) -> dict:
    answer = f"answer {n} " + "lorem ipsum dolor sit amet " * 800  # about 22 kB
    return {
        "id": str(uuid.uuid4()),
        "input": [{"role": "user", "content": f"question {n}"}],
        "output": answer,
        "raw_input": {"model": "gpt-test", "messages": [{"role": "user", "content": answer}]},
        "raw_output": {"choices": [{"message": {"content": answer}}]},
        "contexts": [answer[:5_000], answer[5_000:10_000]],
        "metadata": {"app": "bot", "cost": 0.0125},
        "model": "gpt-test",
        "usage": {"input_tokens": 900, "output_tokens": 4_000},
        "latency_ms": 1234.5,
        "error": "Timeout: " + "x" * 2_000 if n == 0 else None,
        "tags": ["prod"],
        "spans": [
            {"id": "s1", "name": "chat", "kind": "llm", "input": answer, "output": answer},
            {"id": "s2", "name": "search", "kind": "retrieval", "output": [answer[:3_000]]},
        ],
    }


def test_the_list_answers_summaries_and_whole_traces_when_asked(live):
    with live.client(live.key()) as api:
        traces = [big_trace(n) for n in range(50)]
        for start in range(0, 50, 5):  # under the API's 1 MB body cap
            sent = api.post("/traces", json={"traces": traces[start : start + 5]})
            assert sent.status_code == 202, sent.text
        scored = api.post(
            f"/traces/{traces[-1]['id']}/scores", json={"criterion": "helpful", "value": 0.8}
        )
        assert scored.status_code == 201, scored.text
        api.post(f"/traces/{traces[-1]['id']}/labels", json={"criterion": "ok", "value": True})

        listed = api.get("/traces", params={"limit": 50})
        assert listed.status_code == 200
        items = listed.json()["items"]
        assert len(items) == 50
        assert len(listed.content) < 50 * 1_500  # the whole traces are over 50 × 100 kB
        newest = items[0]
        assert set(newest) == SUMMARY_FIELDS
        assert newest["id"] == traces[-1]["id"] and newest["object_type"] == "trace_summary"
        assert newest["model"] == "gpt-test" and newest["latency_ms"] == 1234.5
        assert newest["usage"] == {"input_tokens": 900, "output_tokens": 4_000}
        assert newest["tokens"] == 4_900 and newest["cost"] == 0.0125
        assert newest["status"] == "ok" and newest["error"] is None
        assert newest["input"] == "question 49" and newest["truncated"] is True
        assert newest["output"].startswith("answer 49 lorem") and newest["output"].endswith("…")
        assert len(newest["output"]) == 301
        assert newest["scores"]["helpful"] == {"value": 0.8, "label": None, "status": "ok"}
        assert newest["labels"] == {"ok": True}
        failed = items[-1]
        assert failed["status"] == "error" and failed["error"].startswith("Timeout: x")
        assert len(failed["error"]) == 301

        full = api.get("/traces", params={"limit": 2, "full": "true"}).json()["items"]
        whole = api.get(f"/traces/{traces[-1]['id']}").json()
        assert full[0] == whole
        assert whole["output"] == traces[-1]["output"] and len(whole["spans"]) == 2
        assert whole["raw_output"] == traces[-1]["raw_output"]

        matching = api.get("/traces", params={"condition": "error IS NOT NULL"}).json()
        assert [t["id"] for t in matching["items"]] == [traces[0]["id"]]
        assert json.dumps(matching).count("lorem") <= 12  # the cut text only


def test_the_sdk_list_still_gives_whole_editable_traces(sdk):
    from assay.platform import Trace

    saved = Trace(input="q", output="a" * 5_000, contexts=["c"], metadata={"k": 1}).save()
    listed = Trace.list(limit=1)
    assert listed[0].id == saved.id and listed[0].output == "a" * 5_000
    assert listed[0].contexts == ["c"] and listed[0].metadata == {"k": 1}
    listed[0].tags = ["checked"]
    assert listed[0].save().tags == ["checked"]
