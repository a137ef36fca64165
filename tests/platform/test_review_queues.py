"""Review queues against the real server on SQLite and PostgreSQL: traces whose condition matches
enter as they arrive (and stored ones when the queue is made), the condition fields resolve onto
the trace columns (latest score and label per criterion included), labels through a queue finish
items and export as labelled rows, a judge model scores entering traces through the job worker
(the loopback fake OpenAI server as the judge), and bad or hostile conditions are refused."""

from __future__ import annotations

import re
import time
import uuid

import pytest

from tests.models.fake_openai import dynamic, error, ok


def trace(output="Paris.", env="prod", **fields):
    return {
        "id": str(uuid.uuid4()),
        "input": "What is the capital of France?",
        "output": output,
        "contexts": ["Paris is the capital of France."],
        "metadata": {"env": env, "user": {"tier": "gold"}},
        "model": "gpt-test",
        "usage": {"input_tokens": 10, "output_tokens": 2},
        "tags": [],
    } | fields


def queue_ids(api, name, **params):
    answer = api.get(f"/review-queues/{name}/traces", params=params)
    assert answer.status_code == 200, answer.text
    return {t["id"] for t in answer.json()["items"]}


def test_matching_traces_enter_as_they_arrive(live):
    with live.client(live.key()) as api:
        before = trace(output="Paris, earlier.")
        api.post("/traces", json={"traces": [before]})
        made = api.post(
            "/review-queues",
            json={
                "name": "Prod Paris",
                "condition": "metadata.env = 'prod' AND output ILIKE '%paris%'",
                "criteria": ["Correct"],
            },
        )
        assert made.status_code == 201, made.text
        assert made.json()["items"] == {"pending": 1, "done": 0}  # stored traces enter too
        match = trace(output="PARIS!")
        others = [trace(output="Rome."), trace(env="dev"), trace(output=None)]
        sent = api.post("/traces", json={"traces": [match, *others]})
        assert sent.json()["queued"] == {"Prod Paris": 1}
        assert queue_ids(api, "Prod Paris") == {before["id"], match["id"]}
        assert queue_ids(api, "Prod Paris", status="done") == set()
        everything = api.post("/review-queues", json={"name": "All", "condition": ""})
        assert everything.json()["items"]["pending"] == 5


def test_condition_fields_resolve_on_both_databases(live):
    with live.client(live.key()) as api:
        a = trace(output="Paris.", tags=["vip"], latency_ms=120.0)
        b = trace(output="Rome.", usage={"input_tokens": 1, "output_tokens": 1}, latency_ms=5.0)
        c = trace(output="Lyon.", metadata={"env": "prod", "user": {"tier": "free"}, "n": 3})
        api.post("/traces", json={"traces": [a, b, c]})
        for value, trace_id in ((0.2, a["id"]), (0.9, a["id"]), (0.1, b["id"])):
            api.post(f"/traces/{trace_id}/scores", json={"criterion": "Relevance", "value": value})
        api.post(f"/traces/{b['id']}/labels", json={"criterion": "Correct", "value": "yes"})
        api.post(f"/traces/{b['id']}/labels", json={"criterion": "Correct", "value": "no"})
        api.post(f"/traces/{c['id']}/labels", json={"criterion": "Correct", "value": True})
        api.patch(f"/traces/{c['id']}", json={"version": 1, "changes": {"tags": ["fixed"]}})
        expected = {
            "score.Relevance > 0.5": {a["id"]},  # the latest score, not any score
            "score.Relevance < 0.5": {b["id"]},
            "score.Relevance IS NULL": {c["id"]},
            "label.Correct = 'no'": {b["id"]},
            "label.Correct = true": {c["id"]},
            "label.Correct IS NULL": {a["id"]},
            "'vip' IN tags": {a["id"]},
            "tags CONTAINS 'fixed'": {c["id"]},
            "metadata.user.tier = 'gold'": {a["id"], b["id"]},
            "metadata.n >= 3": {c["id"]},
            "tokens > 5": {a["id"], c["id"]},
            "latency_ms BETWEEN 100 AND 200": {a["id"]},
            "output LIKE 'R%'": {b["id"]},
            "output IN ('Paris.', 'Lyon.')": {a["id"], c["id"]},
            "edited = true": {c["id"]},
            "created_at > now() - 1d AND NOT (model != 'gpt-test')": {a["id"], b["id"], c["id"]},
            f"id = '{a['id']}' OR input = 'nothing'": {a["id"]},
        }
        for condition, ids in expected.items():
            answer = api.get("/traces", params={"condition": condition})
            assert answer.status_code == 200, (condition, answer.text)
            assert {t["id"] for t in answer.json()["items"]} == ids, condition


@pytest.mark.parametrize(
    "condition",
    [
        "1=1; DROP TABLE logged_traces",
        "input='a' OR 1=1",
        "metadata.a' OR '1'='1 = 'x'",
        "input = (SELECT id FROM logged_traces)",
        "pg_sleep(5) = 1",
        "project_id = 1",
        "latency_ms > 'abc'",
        "input = 'a' -- comment",
        # refused by the depth limit (24) and by the length limit (4,000): each small enough as
        # a URL that the HTTP server reads it whole (h11 refuses request lines over 16 KiB with
        # a 400 of its own, which is not what this test is about)
        "(" * 1_000 + "input = 'a'" + ")" * 1_000,
        "input = '" + "a" * 5_000 + "'",
    ],
)
def test_hostile_conditions_are_refused_and_change_nothing(live, condition):
    with live.client(live.key()) as api:
        api.post("/traces", json={"traces": [trace()]})
        listed = api.get("/traces", params={"condition": condition})
        assert listed.status_code == 422, listed.text
        assert listed.json()["error"]["field"] == "condition"
        made = api.post("/review-queues", json={"name": "Q", "condition": condition})
        assert made.status_code == 422 and made.json()["error"]["field"] == "condition"
        assert api.get("/review-queues/Q").status_code == 404
        assert len(api.get("/traces").json()["items"]) == 1


def test_bad_condition_names_the_position(live):
    with live.client(live.key()) as api:
        answer = api.post("/review-queues", json={"name": "Q", "condition": "model = "})
        assert answer.status_code == 422
        message = answer.json()["error"]["message"]
        assert re.search(r"line 1, column \d+", message), message


def test_labels_finish_items_and_export_with_scores(live):
    key = live.key()
    with live.client(key) as api:
        me = api.get("/auth/whoami").json()["key_id"]
        made = api.post(
            "/review-queues",
            json={"name": "Review", "criteria": ["Correct", "Tone"], "dataset": "Reviewed"},
        )
        assert made.status_code == 201
        first, second = trace(), trace(output="Paris, of course.")
        api.post("/traces", json={"traces": [first, second]})
        api.post(f"/traces/{first['id']}/scores", json={"criterion": "Correct", "value": 1.0})
        label = {"criterion": "Correct", "value": "yes", "queue": "Review"}
        one = api.post(f"/traces/{first['id']}/labels", json=label)
        assert one.status_code == 201 and one.json()["item_done"] is False
        two = api.post(
            f"/traces/{first['id']}/labels",
            json={"criterion": "Tone", "value": 4, "queue": "Review", "comment": "fine"},
        )
        assert two.json()["item_done"] is True
        assert queue_ids(api, "Review", status="done") == {first["id"]}
        assert queue_ids(api, "Review", status="pending") == {second["id"]}
        rows = api.get("/review-queues/Review/export").json()["rows"]
        assert [(r["criterion"], r["label"]) for r in rows] == [("Correct", "yes"), ("Tone", 4)]
        correct = rows[0]
        assert correct["trace_id"] == first["id"] and correct["label_author"] == f"key:{me}"
        assert correct["input"] == "What is the capital of France?"
        assert correct["output"] == "Paris." and correct["contexts"] == first["contexts"]
        assert correct["score"] == 1.0 and correct["score_source"] == f"key:{me}"
        assert rows[1]["score"] is None
        datasets = api.get("/datasets", params={"name": "Reviewed"}).json()["items"]
        assert len(datasets) == 1 and datasets[0]["example_count"] == 1
        narrowed = api.patch(
            "/review-queues/Review",
            json={"version": 1, "changes": {"condition": "metadata.env = 'prod'"}},
        )
        assert narrowed.status_code == 200
        outside = trace(env="dev")
        assert api.post("/traces", json={"traces": [outside]}).json()["queued"] == {}
        not_in = api.post(
            f"/traces/{outside['id']}/labels",
            json={"criterion": "Correct", "value": "no", "queue": "Review"},
        )
        assert (
            not_in.status_code == 422 and "not in review queue" in not_in.json()["error"]["message"]
        )


def test_queue_edits_are_version_checked(live):
    with live.client(live.key()) as api:
        api.post("/review-queues", json={"name": "Q1", "condition": "model = 'a'"})
        api.post("/traces", json={"traces": [trace(model="b")]})
        changed = api.patch(
            "/review-queues/Q1", json={"version": 1, "changes": {"condition": "model = 'b'"}}
        )
        assert changed.status_code == 200 and changed.json()["version"] == 2
        assert changed.json()["items"]["pending"] == 1  # the stored trace matches now
        stale = api.patch("/review-queues/Q1", json={"version": 1, "changes": {"name": "Q2"}})
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "conflict"
        taken = api.post("/review-queues", json={"name": "Q1"})
        assert taken.status_code == 409
        judged = api.post(
            "/review-queues",
            json={"name": "Judged", "judge_model": "openai/gpt", "criteria": ["Nope"]},
        )
        assert judged.status_code == 422 and judged.json()["error"]["field"] == "criteria[0]"
        assert api.get("/review-queues/bad%00name").status_code == 422
        assert api.get("/traces/not-a-uuid").status_code == 404
        assert api.delete("/review-queues/Q1").status_code == 204
        assert api.get("/review-queues/Q1").status_code == 404
        assert len(api.get("/traces").json()["items"]) == 1  # the traces stay


def judge_behaviour():
    """A bool judge: yes when the judged response names Paris; the model 'broken' fails."""

    def choose(request):
        if (request.body.get("model") or "") == "broken":
            return error(400, "this judge is broken")
        judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
        return ok("yes" if judged and "Paris" in judged.group(1) else "no")

    return dynamic(choose)


def test_a_judge_model_scores_entering_traces(live, fake):
    fake.default = judge_behaviour()
    with live.client(live.key()) as api:
        criterion = {
            "name": "Correct",
            "phase": "generation",
            "output_type": "bool",
            "criteria_type": "llm_judge",
            "header": "Does the response name the right capital?",
            "bool_true": "It names the right capital.",
            "bool_false": "It does not.",
        }
        assert api.post("/criteria", json=criterion).status_code == 201
        names_paris = {
            "name": "Names Paris",
            "phase": "generation",
            "output_type": "bool",
            "criteria_type": "function",
            "function_name": "string_match",
            "match_type": "regex_match",
            "match_pattern": "paris",
            "case_sensitive": False,
        }
        assert api.post("/criteria", json=names_paris).status_code == 201
        function_queue = api.post(
            "/review-queues",
            json={
                "name": "By function",
                "criteria": ["Names Paris"],
                "judge_model": fake.model_string("judge"),
                "condition": "metadata.env = 'prod'",
            },
        )
        assert function_queue.status_code == 201
        for name, model in (("Judged", "judge"), ("Broken", "broken")):
            made = api.post(
                "/review-queues",
                json={
                    "name": name,
                    "condition": "metadata.env = 'prod'",
                    "criteria": ["Correct"],
                    "judge_model": fake.model_string(model),
                },
            )
            assert made.status_code == 201, made.text
        right, wrong, skipped = trace(output="Paris."), trace(output="Rome."), trace(env="dev")
        api.post("/traces", json={"traces": [right, wrong, skipped]})
        judge_source = f"judge:{fake.model_string('judge')}"
        broken_source = f"judge:{fake.model_string('broken')}"
        deadline = time.monotonic() + 60
        while True:
            stored = live_scores(live, [right["id"], wrong["id"], skipped["id"]])
            if len(stored) >= 6:
                break
            assert time.monotonic() < deadline, f"the judges stored {len(stored)} of 6 outcomes"
            time.sleep(0.2)
        assert len(stored) == 6  # three queues x two entering traces; the dev trace entered none
        by_function = {s.trace_id: s for s in stored if s.source == "function:Names Paris"}
        assert by_function[right["id"]].value == 1.0 and by_function[wrong["id"]].value == 0.0
        by = {(s.source, s.trace_id): s for s in stored}
        assert by[(judge_source, right["id"])].value == 1.0
        assert by[(judge_source, wrong["id"])].value == 0.0
        assert by[(judge_source, right["id"])].outcome["status"] == "ok"
        for trace_id in (right["id"], wrong["id"]):
            broken = by[(broken_source, trace_id)]  # a typed error with its cause, never a NaN
            assert broken.value is None and broken.outcome["status"] == "error"
            assert "broken" in (broken.outcome.get("error_message") or ""), broken.outcome
        latest = api.get(f"/traces/{right['id']}").json()["scores"]["Correct"]
        assert latest["source"] in (judge_source, broken_source)
        judged_requests = [r for r in fake.chat_requests if r.body.get("model") == "judge"]
        assert len(judged_requests) == 2  # each entering trace judged once


def live_scores(live, trace_ids):
    from sqlalchemy import select

    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        return list(
            session.scalars(
                select(models.TraceScore).where(models.TraceScore.trace_id.in_(trace_ids))
            )
        )


def test_a_queue_made_over_many_stored_traces_takes_them_all(live):
    with live.client(live.key()) as api:
        for _batch in range(3):
            traces = [{"id": str(uuid.uuid4()), "output": "x"} for _ in range(500)]
            assert api.post("/traces", json={"traces": traces}).json()["accepted"] == 500
        made = api.post("/review-queues", json={"name": "Everything", "condition": "output = 'x'"})
        assert made.status_code == 201 and made.json()["items"]["pending"] == 1500
        seen, cursor = [], None
        while True:
            params = {"limit": 500} | ({"cursor": cursor} if cursor else {})
            answer = api.get("/review-queues/Everything/traces", params=params).json()
            seen += [t["id"] for t in answer["items"]]
            cursor = answer["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == 1500
