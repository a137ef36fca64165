"""A project's own retention (`projects.retention_days`) on a live server, SQLite and PostgreSQL:
two projects with different horizons lose only their own older traces (with their scores), a
project without a setting keeps the server's default (or every trace when there is none); the
setting round-trips through `GET`/`PATCH /api/v1/project/settings`, bad values are 422s naming
the field, and a key without the `admin` scope gets a 403 and changes nothing."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from assay.platform.server.jobs.retention import Retention
from assay.platform.server.schemas.bodies import RETENTION_DAYS_MAX
from assay.platform.server.storage import models

AGES = (5, 20, 40)  # days: under both horizons, between them, over both


def _project(live, ages=AGES) -> tuple[int, str, dict[int, str], str]:
    """A new project with an admin key and one trace of each age (the oldest scored); returns
    its id, the key, the trace id of each age and its name."""
    name = live.new_project()
    key = live.key(name, scopes=("ingest", "admin"))
    now = datetime.now(timezone.utc)
    made = {age: str(uuid.uuid4()) for age in ages}
    sent = [
        {
            "id": ident,
            "created_at": (now - timedelta(days=age)).isoformat(),
            "input": f"{age} days old",
            "output": "answer",
        }
        for age, ident in made.items()
    ]
    with live.client(key) as api:
        assert api.post("/traces", json={"traces": sent}).status_code == 202
        oldest = made[max(ages)]
        scored = api.post(f"/traces/{oldest}/scores", json={"criterion": "ok", "value": 1})
        assert scored.status_code in (200, 201), scored.text
        project_id = api.get("/auth/whoami").json()["project"]["id"]
    return project_id, key, made, name


def _left(live, project_id: int) -> tuple[set[str], int]:
    T, S = models.LoggedTrace, models.TraceScore
    with live.app.state.assay.transaction() as session:
        ids = set(session.scalars(select(T.id).where(T.project_id == project_id)))
        scores = len(list(session.scalars(select(S.id).where(S.project_id == project_id))))
    return ids, scores


def test_each_project_loses_its_traces_by_its_own_horizon(live):
    own, own_key, own_traces, _name = _project(live)
    default, _key, default_traces, _name = _project(live)
    with live.client(own_key) as api:
        changed = api.patch("/project/settings", json={"retention_days": 10})
        assert changed.status_code == 200, changed.text
        assert changed.json()["retention_days"] == 10
    state = live.app.state.assay

    # the server keeps every trace by default: only the project with a horizon of its own loses any
    Retention(state, None).sweep(only=[own, default])
    assert _left(live, own) == ({own_traces[5]}, 0)  # the scored 40-day trace went with its score
    assert _left(live, default) == (set(default_traces.values()), 1)

    # a server default of 30 days: the other project loses only what is older than that
    Retention(state, 30).sweep(only=[own, default])
    assert _left(live, own) == ({own_traces[5]}, 0)
    assert _left(live, default) == ({default_traces[5], default_traces[20]}, 0)


def test_the_setting_round_trips_and_bad_values_are_named(live):
    _project_id, admin_key, _traces, project = _project(live, ages=(1,))
    with live.client(admin_key) as api:
        first = api.get("/project/settings").json()
        assert first["retention_days"] is None
        assert first["default_retention_days"] == live.app.state.retention_days
        assert first["retention_days_max"] == RETENTION_DAYS_MAX
        assert api.patch("/project/settings", json={"retention_days": 7}).status_code == 200
        assert api.get("/project/settings").json()["retention_days"] == 7
        assert api.patch("/project/settings", json={}).json()["retention_days"] == 7  # left out
        for bad, field in (
            ({"retention_days": "7"}, "retention_days"),
            ({"retention_days": 7.5}, "retention_days"),
            ({"retention_days": True}, "retention_days"),
            ({"retention_days": 0}, "retention_days"),
            ({"retention_days": -3}, "retention_days"),
            ({"retention_days": RETENTION_DAYS_MAX + 1}, "retention_days"),
            ({"retention": 7}, "retention"),
        ):
            refused = api.patch("/project/settings", json=bad)
            assert refused.status_code == 422, (bad, refused.text)
            assert refused.json()["error"]["field"] == field, refused.text
        assert api.get("/project/settings").json()["retention_days"] == 7  # nothing changed

    # a key of the same project without the admin scope reads it but cannot change it
    member_key = live.key(project)
    with live.client(member_key) as api:
        assert api.get("/project/settings").json()["retention_days"] == 7
        refused = api.patch("/project/settings", json={"retention_days": 1})
        assert refused.status_code == 403 and "admin" in refused.json()["error"]["message"]
    with live.client(admin_key) as api:
        assert api.get("/project/settings").json()["retention_days"] == 7
        cleared = api.patch("/project/settings", json={"retention_days": None})
        assert cleared.status_code == 200 and cleared.json()["retention_days"] is None
        assert api.get("/project/settings").json()["effective_retention_days"] is None


def test_a_project_changes_its_own_setting_only(live):
    first, first_key, _t, _n = _project(live, ages=(1,))
    second, second_key, _t, _n = _project(live, ages=(1,))
    with live.client(first_key) as api:
        assert api.patch("/project/settings", json={"retention_days": 3}).status_code == 200
    with live.client(second_key) as api:
        assert api.patch("/project/settings", json={"retention_days": 9}).status_code == 200
        assert api.get("/project/settings").json()["project"]["id"] == second
    with live.client(first_key) as api:
        shown = api.get("/project/settings").json()
        assert (shown["project"]["id"], shown["retention_days"]) == (first, 3)
