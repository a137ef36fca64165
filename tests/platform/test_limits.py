"""Bad input never gets a 500: body cap (413), field caps and types (422 naming the field),
malformed JSON, unstorable text, out-of-range ids, bad pagination."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def client(live):
    with live.client(live.key()) as client:
        yield client


def error_of(response, status):
    assert response.status_code == status, response.text
    return response.json()["error"]


def test_body_over_the_cap_is_413(client):
    big = {"name": "big", "examples": [{"question": "q" * 19_000} for _ in range(60)]}  # ~1.1 MB
    error = error_of(client.post("/datasets", json=big), 413)
    assert "limit" in error["message"]

    def chunks():  # no Content-Length: the stream is cut off at the cap
        yield b'{"name": "x", "examples": ['
        for _ in range(200):
            yield b'{"question": "' + b"q" * 10_000 + b'"},'
        yield b'{"question": "q"}]}'

    error_of(
        client.post("/datasets", content=chunks(), headers={"Content-Type": "application/json"}),
        413,
    )


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/datasets",
            {"name": "d", "examples": [{"question": "q" * 20_001}]},
            "examples[0].question",
        ),
        (
            "/datasets",
            {"name": "d", "examples": [{"question": "q", "ground_truth_context": ["c"] * 101}]},
            "examples[0].ground_truth_context",
        ),
        ("/datasets", {"name": "n" * 201}, "name"),
        ("/datasets", {"name": "   "}, "name"),
        ("/datasets", {"name": "d", "questions_qty": "3"}, "questions_qty"),
        ("/datasets", {"name": "d", "questions_qty": 2**40}, "questions_qty"),
        ("/datasets", {"name": "d", "examples": {"question": "q"}}, "examples"),
        ("/datasets", {"name": "d", "examples": [{"question": 7}]}, "examples[0].question"),
        (
            "/datasets",
            {"name": "d", "examples": [{"question": "q", "extra": 1}]},
            "examples[0].extra",
        ),
        ("/datasets", {"name": "d\x00"}, "name"),
        ("/datasets", {"examples": []}, "name"),
        ("/tasks", {"name": "t", "system_prompt": ["not", "text"]}, "system_prompt"),
        ("/tasks", {"name": "t", "generator_model": "m" * 1001}, "generator_model"),
        (
            "/criteria",
            {"name": "c", "output_type": "bool", "header": "h", "case_sensitive": "yes"},
            "case_sensitive",
        ),
        (
            "/criteria",
            {
                "name": "c",
                "criteria_type": "function",
                "match_type": "regex_match",
                "match_pattern": "a" * 2001,
            },
            "match_pattern",
        ),
        (
            "/criteria",
            {"name": "c", "output_type": "bool", "header": "h", "likert_score_1": "x" * 20_001},
            "likert_score_1",
        ),
    ],
)
def test_field_errors_name_the_field(client, path, body, field):
    error = error_of(client.post(path, json=body), 422)
    assert error["field"] == field and error["message"].startswith(f"{field}: ")


def test_malformed_bodies_are_4xx_never_500(client):
    for raw in (
        b"{not json",
        b"",
        b"[]",
        b"null",
        b'"text"',
        b"\xff\xfe",
        b'{"name": "\\ud800"}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"name": 1e999}',
        json.dumps({"name": "x" * 900_000}).encode(),
    ):
        response = client.post(
            "/datasets", content=raw, headers={"Content-Type": "application/json"}
        )
        assert 400 <= response.status_code < 500, (
            raw[:30],
            response.status_code,
            response.text[:200],
        )
        assert "error" in response.json()
    error = error_of(
        client.post("/tasks", content=b"{not json", headers={"Content-Type": "application/json"}),
        422,
    )
    assert error["field"] == "body" and "not valid JSON" in error["message"]
    error = error_of(
        client.post(
            "/tasks", content=b'{"name": "\\ud800"}', headers={"Content-Type": "application/json"}
        ),
        422,
    )
    assert error["field"] == "name"


def test_ids_and_pagination_are_checked(client):
    for path in (
        "/tasks/0",
        "/tasks/-1",
        "/tasks/99999999999999999999999",
        "/tasks/abc",
        "/datasets/1/examples/0",
    ):
        error = error_of(client.get(path), 422)
        assert error["field"] in ("task_id", "dataset_id", "example_id")
    assert error_of(client.get("/tasks", params={"limit": 0}), 422)["field"] == "limit"
    assert error_of(client.get("/tasks", params={"limit": 501}), 422)["field"] == "limit"
    assert error_of(client.get("/tasks", params={"cursor": "abc"}), 422)["field"] == "cursor"
    assert error_of(client.get("/tasks", params={"cursor": "1" * 30}), 422)["field"] == "cursor"
    assert error_of(client.get("/tasks", params={"name": "a\x00b"}), 422)["field"] == "name"
    assert error_of(client.get("/datasets/1", params={"version": 0}), 422)["field"] == "version"
    assert error_of(client.get("/nowhere"), 404)["code"] == "not_found"
    assert error_of(client.patch("/tasks"), 405)["code"] == "method_not_allowed"


def test_every_list_is_paginated(client):
    for i in range(7):
        assert client.post("/tasks", json={"name": f"t{i}"}).status_code == 201
    seen, cursor, pages = [], None, 0
    while True:
        body = client.get(
            "/tasks", params={"limit": 3, **({"cursor": cursor} if cursor else {})}
        ).json()
        seen += [t["name"] for t in body["items"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"t{i}" for i in range(7)] and pages == 3
    dataset = client.post(
        "/datasets", json={"name": "d", "examples": [{"question": f"q{i}"} for i in range(5)]}
    ).json()
    for path in (
        "/datasets",
        "/criteria",
        f"/datasets/{dataset['id']}/versions",
        f"/datasets/{dataset['id']}/examples",
    ):
        body = client.get(path, params={"limit": 2}).json()
        assert set(body) == {"items", "next_cursor"}
    assert (
        len(client.get(f"/datasets/{dataset['id']}/examples", params={"limit": 2}).json()["items"])
        == 2
    )


def test_nothing_half_written(client):
    before = client.get("/datasets").json()["items"]
    bad = {"name": "half", "examples": [{"question": "fine"}, {"question": "q" * 20_001}]}
    assert client.post("/datasets", json=bad).status_code == 422
    assert client.get("/datasets").json()["items"] == before
