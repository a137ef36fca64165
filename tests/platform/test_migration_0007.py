"""Migration 0007 (a trace's payload stored once, compressed) on SQLite and PostgreSQL.

A database at revision 0006 holding a trace the way that version stored it (every field in its
own JSON column) is upgraded and served by the real server: the old trace reads as before, in
the list and whole, conditions still find it, an edit moves it to the payload, and spans sent
over OTLP later merge into an old trace. New traces are stored once: the old columns stay empty,
the payload holds each long text once and compressed."""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timezone

import httpx
from alembic import command
from sqlalchemy import insert, inspect, select, text

from assay.platform.server.auth import keys as auth
from assay.platform.server.storage import models
from assay.platform.server.storage.db import alembic_config, make_engine, migrate
from assay.platform.server.storage.trace_payload import decode, encode
from tests.platform.conftest import start_server, stop_server
from tests.platform.test_migration_0006 import old_database  # noqa: F401  (the fixture)
from tests.platform.test_otlp import otlp_json

ANSWER = "The refund takes five working days once the parcel is back. " * 30  # 1,830 chars
SPANS = [{"id": "s1", "name": "chat", "kind": "llm", "input": "q?", "output": ANSWER}]


def fill_at_0006(engine, trace_id: str) -> None:
    now = datetime.now(timezone.utc)
    with engine.begin() as db:
        project = db.execute(
            insert(models.Project.__table__).values(name="old", created_at=now)
        ).inserted_primary_key[0]
        db.execute(
            insert(models.LoggedTrace.__table__).values(
                project_id=project,
                id=trace_id,
                created_at=now,
                input=[{"role": "user", "content": "q?"}],
                output=ANSWER,
                raw_input={"messages": [{"role": "user", "content": "q?"}]},
                raw_output={"output": ANSWER},
                input_text="q?",
                output_text=ANSWER,
                contexts=["a passage"],
                meta={"app": "bot"},
                model="gpt-old",
                tags=["old"],
                spans=SPANS,
            )
        )


def test_old_traces_stay_readable_and_new_ones_are_stored_once(old_database):  # noqa: F811
    engine = make_engine(old_database)
    old_id = str(uuid.uuid4())
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0006")
        fill_at_0006(engine, old_id)
        migrate(engine)
        assert "payload" in {c["name"] for c in inspect(engine).get_columns("logged_traces")}
    finally:
        engine.dispose()

    live = start_server("upgraded", old_database)
    try:
        state = live.app.state.assay
        with state.transaction() as session:
            key, _row = auth.create_key(
                session, state.pepper, project_name="old", scopes=("read", "write", "ingest")
            )
        with live.client(key) as api:
            old = api.get(f"/traces/{old_id}").json()
            assert old["output"] == ANSWER and old["contexts"] == ["a passage"]
            assert old["raw_output"] == {"output": ANSWER} and old["spans"] == SPANS
            listed = api.get("/traces", params={"condition": "output LIKE '%refund%'"}).json()
            assert [t["id"] for t in listed["items"]] == [old_id]
            assert listed["items"][0]["output"].startswith("The refund")

            edited = api.patch(
                f"/traces/{old_id}", json={"version": 1, "changes": {"contexts": ["new"]}}
            )
            assert edited.status_code == 200, edited.text
            again = api.get(f"/traces/{old_id}").json()
            assert again["contexts"] == ["new"] and again["output"] == ANSWER
            assert again["spans"] == SPANS and again["input"] == old["input"]
            revisions = api.get(f"/traces/{old_id}/revisions").json()["items"]
            assert revisions[0]["snapshot"]["contexts"] == ["a passage"]

            new_id = uuid.uuid4()
            body = otlp_json(new_id.hex, "00f067aa0ba902b7", **{"output.value": ANSWER})
            sent = httpx.post(
                f"{live.base_url}/otlp/v1/traces",
                json=body,
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            )
            assert sent.status_code == 200, sent.text
            assert api.get(f"/traces/{new_id}").json()["output"] == ANSWER
            later = otlp_json(uuid.UUID(old_id).hex, "00f067aa0ba902b8", **{"input.value": "q2"})
            sent = httpx.post(
                f"{live.base_url}/otlp/v1/traces",
                json=later,
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            )
            assert sent.status_code == 200 and sent.json() == {}, sent.text
            grown = api.get(f"/traces/{old_id}").json()
            assert [s["id"] for s in grown["spans"]] == ["s1", "00f067aa0ba902b8"]
            assert grown["contexts"] == ["new"] and grown["output"] == ANSWER  # the edit stays

        with state.transaction() as session:
            T = models.LoggedTrace
            moved = session.scalar(select(T).where(T.id == old_id))
            assert moved.payload is not None  # written again: now in the payload
            assert moved.legacy_output is None and moved.legacy_spans == []
            fresh = session.scalar(select(T).where(T.id == str(new_id)))
            assert fresh.legacy_output is None and fresh.legacy_spans == []
            assert fresh.output == ANSWER and fresh.spans[0]["output"] == ANSWER
            # the answer is in the span's attributes, its output, the trace's output and the
            # searchable text: the payload holds it once, compressed
            assert len(fresh.payload) < len(ANSWER) / 2
        with live.app.state.assay.engine.connect() as db:
            raw = db.execute(
                text("SELECT output, spans FROM logged_traces WHERE id = :id"), {"id": str(new_id)}
            ).one()
            assert raw[0] is None and raw[1] in ([], "[]")
    finally:
        stop_server(live)


def test_the_payload_codec_keeps_every_value():
    fields = {
        "input": "the question",
        "output": [{"role": "assistant", "content": "x" * 500}],
        "raw_input": {"messages": [{"role": "assistant", "content": "x" * 500}], "$s": 1},
        "raw_output": {"$d": {"$s": "y" * 80}, "n": 1.5, "none": None, "ok": True},
        "contexts": ["c" * 100, "c" * 100, "short"],
        "spans": [{"id": "a", "attributes": {"k": ["z" * 70, 3]}}],
    }
    for input_text in ("the question", "something else"):
        payload = encode(fields, input_text, "")
        assert decode(payload, input_text, "") == fields
    assert decode(encode({"input": None, "output": "a"}, "", "a"), "", "a")["output"] == "a"
    small = encode({"input": "a", "output": "b"}, "", "")
    assert small[:1] == b"j" and decode(small)["contexts"] == []


def test_the_payload_codec_keeps_what_orjson_would_not_write_alike():
    """The payload is written by orjson, except a document holding a value orjson writes
    differently (NaN as null) or refuses (an integer past 64 bits, a key that is not a string):
    then by `json`, as before. Each reads back as `json` would give it."""
    text = "w" * 100
    for odd, back in (
        (float("nan"), None),  # compared with isnan below
        (2**70, 2**70),
        ({1: "one"}, {"1": "one"}),
        (-(2**64), -(2**64)),
    ):
        fields = {"input": None, "output": None, "raw_input": {"odd": odd, "text": text}}
        got = decode(encode(fields))["raw_input"]
        assert got["text"] == text
        if back is None:
            assert isinstance(got["odd"], float) and math.isnan(got["odd"])
        else:
            assert got["odd"] == back and type(got["odd"]) is type(back)
    plain = {"raw_output": {"big": 2**63 - 1, "small": 1e-7, "f": 1e16, "u": "é" * 70}}
    assert decode(encode(plain))["raw_output"] == plain["raw_output"]
