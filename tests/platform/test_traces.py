"""Logged traces against the real server on SQLite and PostgreSQL: batched idempotent ingest, its
limits (a 4xx naming the field and index), reading, edits with a version check (two concurrent
edits: one wins, the other is refused, nothing lost), revisions, labels and traces to a dataset."""

from __future__ import annotations

import threading
import uuid

import httpx


def trace(**fields):
    base = {
        "id": str(uuid.uuid4()),
        "input": [{"role": "user", "content": "What is the capital of France?"}],
        "output": "Paris.",
        "contexts": ["France's capital is Paris."],
        "metadata": {"env": "prod", "user": {"tier": "gold"}},
        "model": "gpt-test",
        "usage": {"input_tokens": 12, "output_tokens": 3},
        "latency_ms": 41.5,
        "tags": ["geo"],
        "spans": [{"id": "s1", "name": "retrieve", "kind": "retrieval", "output": ["doc"]}],
    }
    return base | fields


def test_ingest_is_idempotent_and_reads_back(live):
    with live.client(live.key()) as api:
        first, second = trace(), trace(output="Rome.", tags=[])
        sent = api.post("/traces", json={"traces": [first, second, first]})
        assert sent.status_code == 202, sent.text
        assert sent.json()["accepted"] == 2 and sent.json()["duplicates"] == 1
        again = api.post("/traces", json={"traces": [second]})
        assert again.json() == {"accepted": 0, "duplicates": 1, "queued": {}}

        got = api.get(f"/traces/{first['id']}").json()
        assert got["input"] == first["input"] and got["output"] == "Paris."
        assert got["metadata"] == {"env": "prod", "user": {"tier": "gold"}}
        assert got["usage"] == {"input_tokens": 12, "output_tokens": 3} and got["tokens"] == 15
        assert got["version"] == 1 and got["edited"] is False
        assert got["spans"][0]["kind"] == "retrieval" and got["spans"][0]["output"] == ["doc"]

        listed = api.get("/traces", params={"limit": 1})
        assert listed.status_code == 200
        assert [t["id"] for t in listed.json()["items"]] == [second["id"]]  # newest first
        rest = api.get("/traces", params={"limit": 1, "cursor": listed.json()["next_cursor"]})
        assert [t["id"] for t in rest.json()["items"]] == [first["id"]]
        assert rest.json()["next_cursor"] is None


def test_traces_of_another_project_are_not_found(live):
    mine = trace()
    with live.client(live.key()) as api:
        assert api.post("/traces", json={"traces": [mine]}).status_code == 202
    with live.client(live.key()) as other:
        assert other.get(f"/traces/{mine['id']}").status_code == 404
        assert other.get("/traces").json()["items"] == []
        # the same client id in another project is that project's own trace
        assert other.post("/traces", json={"traces": [mine]}).json()["accepted"] == 1


def test_bad_batches_name_the_field_and_index_and_store_nothing(live):
    with live.client(live.key()) as api:
        cases = [
            ({"traces": [trace(), trace(id="not-a-uuid")]}, "traces[1].id"),
            ({"traces": [trace(), trace(model="m" * 201)]}, "traces[1].model"),
            ({"traces": [trace(tags=["ok"] * 51)]}, "traces[0].tags"),
            ({"traces": [trace(contexts=["x"] * 101)]}, "traces[0].contexts"),
            ({"traces": [trace(metadata={"a": "nul\x00"})]}, "traces[0].metadata"),
            ({"traces": [trace(spans=[{"id": "s", "kind": "weird"}])]}, "traces[0].spans[0].kind"),
            ({"traces": [trace(usage={"input_tokens": -1})]}, "traces[0].usage.input_tokens"),
            ({"traces": [trace(surprise=1)]}, "traces[0].surprise"),
            ({"traces": [trace(input=nested(40))]}, "traces[0].input"),
            ({"traces": []}, "traces"),
        ]
        for body, field in cases:
            answer = api.post("/traces", json=body)
            assert answer.status_code == 422, (field, answer.text)
            assert answer.json()["error"]["field"] == field, answer.json()
        too_many = {"traces": [{"id": str(uuid.uuid4())} for _ in range(501)]}
        answer = api.post("/traces", json=too_many)
        assert answer.status_code == 422 and answer.json()["error"]["field"] == "traces"
        huge = {"traces": [trace(output="x" * 1_100_000)]}
        assert api.post("/traces", json=huge).status_code == 413
        assert api.get("/traces").json()["items"] == []  # nothing half-written


def nested(depth):
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_ingest_needs_the_ingest_or_write_scope(live):
    sent = trace()
    with live.client(live.key(scopes=("ingest",))) as ingest_only:
        assert ingest_only.post("/traces", json={"traces": [sent]}).status_code == 202
        assert ingest_only.get("/traces").status_code == 403
    with live.client(live.key(scopes=("read",))) as reader:
        assert reader.post("/traces", json={"traces": [trace()]}).status_code == 403


def test_edit_keeps_the_original_and_refuses_a_stale_version(live):
    sent = trace()
    with live.client(live.key()) as api:
        api.post("/traces", json={"traces": [sent]})
        edited = api.patch(
            f"/traces/{sent['id']}",
            json={"version": 1, "changes": {"output": "Paris, France.", "tags": ["fixed"]}},
        )
        assert edited.status_code == 200, edited.text
        body = edited.json()
        assert body["version"] == 2 and body["edited"] is True
        assert body["output"] == "Paris, France." and body["tags"] == ["fixed"]
        stale = api.patch(
            f"/traces/{sent['id']}", json={"version": 1, "changes": {"output": "lost?"}}
        )
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "conflict"
        assert "version 2" in stale.json()["error"]["message"]
        assert api.get(f"/traces/{sent['id']}").json()["output"] == "Paris, France."
        revisions = api.get(f"/traces/{sent['id']}/revisions").json()["items"]
        assert [r["version"] for r in revisions] == [1]
        assert revisions[0]["snapshot"]["output"] == "Paris." and revisions[0]["edited_by"]
        assert revisions[0]["edited_at"].endswith("Z")
        not_editable = api.patch(
            f"/traces/{sent['id']}", json={"version": 2, "changes": {"model": "x"}}
        )
        assert not_editable.status_code == 422
        assert not_editable.json()["error"]["field"] == "changes.model"
        nothing = api.patch(f"/traces/{sent['id']}", json={"version": 2, "changes": {}})
        assert nothing.status_code == 422
        missing = api.patch(
            f"/traces/{uuid.uuid4()}", json={"version": 1, "changes": {"output": "x"}}
        )
        assert missing.status_code == 404


def test_two_concurrent_edits_one_wins_and_nothing_is_lost(live):
    key = live.key()
    with live.client(key) as api:
        ids = [trace()["id"] for _ in range(5)]
        api.post("/traces", json={"traces": [trace(id=i) for i in ids]})
    for trace_id in ids:
        barrier = threading.Barrier(2)
        answers: dict[str, httpx.Response] = {}

        def edit(
            who: str,
            trace_id: str = trace_id,
            barrier: threading.Barrier = barrier,
            answers: dict[str, httpx.Response] = answers,
        ) -> None:
            with live.client(key) as mine:
                barrier.wait(timeout=10)
                answers[who] = mine.patch(
                    f"/traces/{trace_id}",
                    json={"version": 1, "changes": {"output": f"by {who}"}},
                )

        threads = [threading.Thread(target=edit, args=(who,)) for who in ("alice", "bob")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        codes = sorted(a.status_code for a in answers.values())
        assert codes == [200, 409], {w: a.text for w, a in answers.items()}
        winner = next(w for w, a in answers.items() if a.status_code == 200)
        with live.client(key) as api:
            now = api.get(f"/traces/{trace_id}").json()
            assert now["output"] == f"by {winner}" and now["version"] == 2
            revisions = api.get(f"/traces/{trace_id}/revisions").json()["items"]
            assert len(revisions) == 1 and revisions[0]["snapshot"]["output"] == "Paris."


def test_labels_are_appended_with_their_author(live):
    key = live.key()
    sent = trace()
    with live.client(key) as api:
        api.post("/traces", json={"traces": [sent]})
        me = api.get("/auth/whoami").json()["key_id"]
        first = api.post(f"/traces/{sent['id']}/labels", json={"criterion": "Correct", "value": 1})
        assert first.status_code == 201, first.text
        assert first.json()["author"] == f"key:{me}"
        second = api.post(
            f"/traces/{sent['id']}/labels",
            json={"criterion": "Correct", "value": "partly", "comment": "names no country"},
        )
        assert second.status_code == 201
        history = api.get(f"/traces/{sent['id']}/labels").json()["items"]
        assert [h["value"] for h in history] == [1, "partly"]
        assert api.get(f"/traces/{sent['id']}").json()["labels"]["Correct"]["value"] == "partly"
        bad = api.post(f"/traces/{sent['id']}/labels", json={"criterion": "C", "value": [1]})
        assert bad.status_code == 422 and bad.json()["error"]["field"].startswith("value")
        unknown_queue = api.post(
            f"/traces/{sent['id']}/labels", json={"criterion": "C", "value": 1, "queue": "nope"}
        )
        assert (
            unknown_queue.status_code == 422 and unknown_queue.json()["error"]["field"] == "queue"
        )
        score = api.post(f"/traces/{sent['id']}/scores", json={"criterion": "Length", "value": 0.5})
        assert score.status_code == 201
        assert api.get(f"/traces/{sent['id']}").json()["scores"]["Length"]["value"] == 0.5


def test_traces_become_dataset_examples_in_a_new_version(live):
    with live.client(live.key()) as api:
        a, b = trace(), trace(input="What is the capital of Italy?", output="Rome.", contexts=[])
        api.post("/traces", json={"traces": [a, b]})
        made = api.post("/traces/to-dataset", json={"trace_ids": [a["id"]], "dataset": "From prod"})
        assert made.status_code == 200, made.text
        assert made.json()["version"] == 1 and made.json()["added"] == 1
        dataset_id = made.json()["dataset_id"]
        more = api.post(
            "/traces/to-dataset", json={"trace_ids": [a["id"], b["id"]], "dataset": "From prod"}
        )
        assert more.json()["version"] == 2 and more.json()["added"] == 1  # a is there already
        examples = api.get(f"/datasets/{dataset_id}/examples").json()["items"]
        assert [e["question"] for e in examples] == [
            "What is the capital of France?",
            "What is the capital of Italy?",
        ]
        assert examples[0]["ground_truth_answer"] == "Paris."
        assert examples[0]["ground_truth_context"] == ["France's capital is Paris."]
        missing = api.post(
            "/traces/to-dataset",
            json={"trace_ids": [a["id"], str(uuid.uuid4())], "dataset": "From prod"},
        )
        assert missing.status_code == 422 and missing.json()["error"]["field"] == "trace_ids[1]"
        assert api.get(f"/datasets/{dataset_id}").json()["latest_version"] == 2
