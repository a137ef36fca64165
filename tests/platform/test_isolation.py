"""Rows belong to a project: with project B's key, every id route answers 404 for project A's ids,
and A's objects are untouched."""

from __future__ import annotations

import re

from starlette.routing import Route

BODIES = {
    "datasets": {"name": "stolen", "examples": [{"question": "q"}]},
    "tasks": {"name": "stolen"},
    "criteria": {"name": "stolen", "output_type": "bool", "header": "ok?"},
    "traces": {"criterion": "stolen", "value": 1},  # a label, and a score
    "sessions": {"criterion": "stolen", "value": 1},  # a label of the whole session
    "experiments": None,  # cancel and resume take no body
    "evaluators": {
        "name": "A queue",
        "criteria": ["A crit"],
        "judge_model": "openai/m@http://127.0.0.1:9/v1",
    },
    "backfill": {"since": "2026-01-01T00:00:00Z"},  # an evaluator's backfill (pause, resume: none)
}
PATCHES = {
    "traces": {"version": 1, "changes": {"output": "stolen"}},
    "review-queues": {"version": 1, "changes": {"name": "stolen"}},
}


def _seed(client, fake):
    dataset = client.post(
        "/datasets",
        json={
            "name": "A data",
            "examples": [
                {"question": "q1", "ground_truth_context": ["c"], "ground_truth_answer": "a"}
            ],
        },
    ).json()
    example = client.get(f"/datasets/{dataset['id']}/examples").json()["items"][0]
    task = client.post("/tasks", json={"name": "A task", "generator_model": "m"}).json()
    criteria = client.post(
        "/criteria",
        json={
            "name": "A crit",
            "criteria_type": "function",
            "match_type": "contains",
            "match_pattern": "a",
        },
    ).json()
    experiment = client.post(
        "/experiments",
        json={
            "name": "A exp",
            "dataset_id": dataset["id"],
            "task_id": task["id"],
            "criteria_ids": [criteria["id"]],
            "cohorts": [{"name": "c", "generator_model": fake.model_string("gen")}],
        },
    ).json()
    trace_id = "6f1f2b9e-4a53-4d5c-9f0e-2f6b1f0c7a11"
    trace = {"id": trace_id, "input": "q", "output": "a", "metadata": {"session_id": "A chat"}}
    client.post("/traces", json={"traces": [trace]})
    client.post("/review-queues", json={"name": "A queue"})
    evaluator = {**BODIES["evaluators"], "judge_model": fake.model_string("judge")}
    assert client.post("/evaluators", json=evaluator).status_code == 201
    return {
        "trace_id": trace_id,
        "session_id": "A chat",
        "name": "A queue",
        "dataset_id": dataset["id"],
        "example_id": example["id"],
        "task_id": task["id"],
        "criteria_id": criteria["id"],
        "experiment_id": experiment["id"],
    }


def test_another_projects_ids_are_not_found_on_every_id_route(live, fake):
    with live.client(live.key()) as a, live.client(live.key()) as b:
        ids = _seed(a, fake)
        before = {
            path: a.get(path).json()
            for path in (
                f"/datasets/{ids['dataset_id']}",
                f"/tasks/{ids['task_id']}",
                f"/criteria/{ids['criteria_id']}",
                f"/traces/{ids['trace_id']}",
                f"/sessions/{ids['session_id']}",
                f"/review-queues/{ids['name']}",
                f"/evaluators/{ids['name']}",
            )
        }
        assert a.get(f"/experiments/{ids['experiment_id']}").status_code == 200
        checked = 0
        for route in live.app.routes:
            params = re.findall(r"\{([^}]+)\}", getattr(route, "path", ""))
            if not isinstance(route, Route) or not params:
                continue
            path = route.path[len("/api/v1") :]
            for name in params:
                assert name in ids, f"the test does not know the parameter {name!r} of {route.path}"
                path = path.replace("{" + name + "}", str(ids[name]))
            kind = path.split("/")[1]
            for method in route.methods - {"HEAD"}:
                # the body by action (an evaluator's backfill), else by kind
                action = path.split("/")[-1]
                posted = method in ("PUT", "POST")
                body = (BODIES.get(action) or BODIES[kind]) if posted else PATCHES.get(kind)
                response = b.request(method, path, json=body if method != "DELETE" else None)
                assert response.status_code == 404, (method, path, response.text)
                assert response.json()["error"]["code"] == "not_found"
                checked += 1
        assert checked >= 10
        for path, body in before.items():  # nothing of A was changed or deleted
            assert a.get(path).json() == body
        # and B's own lists do not show A's objects
        for kind in ("datasets", "tasks", "criteria", "experiments", "sessions"):
            assert b.get(f"/{kind}").json()["items"] == []
        assert b.get("/datasets", params={"name": "A data"}).json()["items"] == []


def test_repositories_require_a_project_scope(live):
    import pytest

    from assay.platform.server.storage.repos import DatasetRepo, TaskRepo

    with live.app.state.assay.transaction() as session:
        for repo in (DatasetRepo, TaskRepo):
            with pytest.raises(TypeError, match="project"):
                repo(session, None)  # type: ignore[arg-type]
            with pytest.raises(TypeError):
                repo(session)  # type: ignore[call-arg]


def test_example_of_another_dataset_is_not_found(live, fake):
    with live.client(live.key()) as a:
        one = _seed(a, fake)
        other = a.post("/datasets", json={"name": "other", "examples": [{"question": "x"}]}).json()
        assert a.get(f"/datasets/{other['id']}/examples/{one['example_id']}").status_code == 404
        assert (
            a.get(f"/datasets/{one['dataset_id']}/examples/{one['example_id']}").status_code == 200
        )
