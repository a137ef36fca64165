"""The experiment pages over HTTP, on SQLite and PostgreSQL, with the worker and the loopback fake
model server: the New experiment form (the API's checks, the problem beside its field, what was
typed kept, nothing stored when refused), the generations as traces of the project (filtered by
experiment and cohort, scored, opened from the experiment's pages, published once), and the compare
page (its figures are the API's and `assay.stats`'s, each criterion on its own scale, a zero drawn,
rows linked to their traces, paging)."""

from __future__ import annotations

import html
import re
import time
import uuid
from typing import Any

import pytest

from assay.platform.server.storage.experiment_traces import condition_for
from assay.platform.server.ui.experiment_compare import PAGE_SIZE
from tests.platform.test_experiments import behaviour
from tests.platform.ui.conftest import csrf_in, make_user, sign_in

COUNTRIES = ("France", "Italy", "Japan", "Spain")


def _problems(page: str) -> dict[str, str]:
    return {
        name: html.unescape(text)
        for name, text in re.findall(r'data-problem="([^"]+)">([^<]*)<', page)
    }


def _objects(user: Any, fake: Any, examples: int = 4) -> dict[str, Any]:
    """A dataset of `examples` capitals questions (unique to the call), a task and two criteria:
    a function criterion (1 when the answer names a capital) and a 5-point judge."""
    tag = uuid.uuid4().hex[:8]
    api = user.api()
    questions = [
        {"question": f"What is the capital of {COUNTRIES[i % 4]}? ({tag} {i})"}
        for i in range(examples)
    ]
    dataset = api.post("/datasets", json={"name": f"caps {tag}", "examples": questions}).json()
    task = api.post(
        "/tasks", json={"name": f"qa {tag}", "generator_model": fake.model_string("gen-task")}
    ).json()
    named = api.post(
        "/criteria",
        json={
            "name": f"Names a capital {tag}",
            "criteria_type": "function",
            "function_name": "string_match",
            "output_type": "bool",
            "match_type": "regex_match",
            "match_pattern": "paris|rome|tokyo|madrid",
        },
    ).json()
    rubric = api.post(
        "/criteria",
        json={
            "name": f"Relevance {tag}",
            "criteria_type": "llm_judge",
            "output_type": "5-point",
            "header": "How relevant is the answer?",
            **{f"likert_score_{i}": f"level {i}" for i in range(1, 6)},
        },
    ).json()
    return {"tag": tag, "dataset": dataset, "task": task, "named": named, "rubric": rubric}


def _form(user: Any, client: Any) -> str:
    page = client.get(f"{user.base}/experiments/new")
    assert page.status_code == 200, page.text
    return csrf_in(page.text)


def _wait(user: Any, experiment_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        progress = user.api().get(f"/experiments/{experiment_id}/progress").json()
        if progress["status"] in ("completed", "failed", "cancelled"):
            return progress
        time.sleep(0.1)
    raise AssertionError(f"experiment {experiment_id} did not finish: {progress}")


def _count_experiments(user: Any) -> int:
    return len(user.api().get("/experiments").json()["items"])


def test_the_form_refuses_as_the_api_does_and_keeps_what_was_typed(live, fake, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):  # so these models can never work
        monkeypatch.delenv(name, raising=False)
    user = make_user(live)
    made = _objects(user, fake)
    client = sign_in(user)
    csrf = _form(user, client)
    typed = {
        "csrf_token": csrf,
        "rows": "2",
        "name": "typed <name>",
        "dataset_id": str(made["dataset"]["id"]),
        "task_id": str(made["task"]["id"]),
        "criteria_ids": [str(made["rubric"]["id"])],
        "judge_model": fake.model_string("judge"),
        "cohorts[0].name": "first",
        "cohorts[0].generator_model": "claude-3-sonnet-20240229",  # no ANTHROPIC_API_KEY here
        "cohorts[0].system_prompt": "be brief",
        "cohorts[1].name": "second",
        "cohorts[1].generator_model": fake.model_string("gen-b"),
    }
    answer = client.post(f"{user.base}/experiments/new", data=typed)
    assert answer.status_code == 422
    problems = _problems(answer.text)
    assert list(problems) == ["cohorts[0].generator_model"]
    assert "ANTHROPIC_API_KEY" in problems["cohorts[0].generator_model"]
    # the same body through the API: the same field, the same words
    body = {
        "name": "typed <name>",
        "dataset_id": made["dataset"]["id"],
        "task_id": made["task"]["id"],
        "criteria_ids": [made["rubric"]["id"]],
        "judge_model": fake.model_string("judge"),
        "cohorts": [
            {"name": "first", "generator_model": "claude-3-sonnet-20240229"},
            {"name": "second", "generator_model": fake.model_string("gen-b")},
        ],
    }
    refused = user.api().post("/experiments", json=body).json()["error"]
    assert refused["field"] == "cohorts[0].generator_model"
    assert refused["message"] == problems["cohorts[0].generator_model"]
    # what was typed is on the page again (escaped), and nothing was stored
    assert 'value="typed &lt;name&gt;"' in answer.text
    assert (
        'value="claude-3-sonnet-20240229"' in answer.text and ">be brief</textarea>" in answer.text
    )
    assert re.search(rf'value="{made["rubric"]["id"]}" checked', answer.text)
    assert _count_experiments(user) == 0

    for changes, field in (
        ({"judge_model": "nosuchprovider/model"}, "judge_model"),
        ({"name": ""}, "name"),
        ({"cohorts[1].name": "first"}, "cohorts[1].name"),
        ({"dataset_id": "999999"}, "dataset_id"),
        ({"criteria_ids": []}, "criteria_ids"),
        (
            {
                "cohorts[0].name": "",
                "cohorts[0].generator_model": "",
                "cohorts[0].system_prompt": "",
                "cohorts[1].name": "",
                "cohorts[1].generator_model": "",
            },
            "cohorts",
        ),
    ):
        fixed = {**typed, "cohorts[0].generator_model": fake.model_string("gen-a"), **changes}
        answer = client.post(f"{user.base}/experiments/new", data=fixed)
        assert answer.status_code in (404, 422), (changes, answer.status_code)
        assert list(_problems(answer.text)) == [field], (changes, _problems(answer.text))
    assert _count_experiments(user) == 0

    # "Add a cohort": the form again with a third row, everything typed kept, nothing stored
    more = client.post(f"{user.base}/experiments/new", data={**typed, "more": "1"})
    assert more.status_code == 200 and 'name="cohorts[2].name"' in more.text
    assert 'value="second"' in more.text and _problems(more.text) == {}
    assert _count_experiments(user) == 0


def test_a_form_submission_runs_and_its_generations_are_traces(live, fake):
    fake.default = behaviour()
    user = make_user(live)
    made = _objects(user, fake)
    client = sign_in(user)
    started = client.post(
        f"{user.base}/experiments/new",
        data={
            "csrf_token": _form(user, client),
            "rows": "3",
            "name": "from the form",
            "dataset_id": str(made["dataset"]["id"]),
            "task_id": str(made["task"]["id"]),
            "criteria_ids": [str(made["named"]["id"]), str(made["rubric"]["id"])],
            "judge_model": fake.model_string(f"judge-{made['tag']}"),
            "cohorts[0].name": "smart",
            "cohorts[0].generator_model": fake.model_string(f"gen-{made['tag']}-a"),
            "cohorts[0].system_prompt": "You are smart.",
            "cohorts[1].name": "plain",
            "cohorts[1].generator_model": "",  # the task's model
            # row 3 left blank: ignored
        },
    )
    assert started.status_code == 303, started.text
    experiment_id = int(started.headers["location"].rsplit("/", 1)[1])
    experiment = user.api().get(f"/experiments/{experiment_id}").json()
    assert [c["name"] for c in experiment["cohorts"]] == ["smart", "plain"]
    assert experiment["cohorts"][1]["generator_model"] == ""
    assert experiment["cohorts"][0]["system_prompt"] == "You are smart."
    assert _wait(user, experiment_id)["status"] == "completed"

    # the generations are traces: filtered by experiment and cohort, with their scores
    api = user.api()
    found = api.get("/traces", params={"condition": condition_for(experiment_id, "smart")})
    smart = found.json()["items"]
    assert len(smart) == 4, found.text
    every = api.get("/traces", params={"condition": condition_for(experiment_id)}).json()["items"]
    assert len(every) == 8
    rows = api.get(f"/experiments/{experiment_id}/rows", params={"limit": 100}).json()["items"]
    one = api.get(f"/traces/{smart[0]['id']}").json()
    mine = next(r for r in rows if r["cohort"] == "smart" and r["answer"] == one["output"])
    assert "The capital is" in one["output"] and one["metadata"]["cohort"] == "smart"
    assert one["metadata"]["experiment_id"] == experiment_id and "experiment" in one["tags"]
    for criterion, cell in mine["scores"].items():
        assert one["scores"][criterion]["value"] == cell["value"]

    # the experiment page links to them; the links open the traces table and a trace page
    page = client.get(f"{user.base}/experiments/{experiment_id}").text
    assert f'href="{user.base}/experiments/{experiment_id}/traces?cohort=smart"' in page
    opened = client.get(
        f"{user.base}/experiments/{experiment_id}/traces",
        params={"cohort": "plain"},
        follow_redirects=True,
    )
    assert opened.status_code == 200 and opened.url.path == f"{user.base}/traces"
    listed = set(re.findall(r'href="[^"]*/traces/([0-9a-f-]{36})"', opened.text))
    plain = api.get("/traces", params={"condition": condition_for(experiment_id, "plain")})
    assert listed == {t["id"] for t in plain.json()["items"]} and len(listed) == 4
    trace_page = client.get(
        f"{user.base}/experiments/{experiment_id}/generations/{mine['trace_id']}",
        follow_redirects=True,
    )
    assert trace_page.status_code == 200 and trace_page.url.path.endswith(f"/traces/{one['id']}")
    assert (
        client.get(f"{user.base}/experiments/{experiment_id}/traces?cohort=nobody").status_code
        == 404
    )
    assert (
        client.get(f"{user.base}/experiments/{experiment_id}/generations/999999").status_code == 404
    )
    other = make_user(live)  # another project's member cannot open them
    assert sign_in(other).get(f"{other.base}/experiments/{experiment_id}/traces").status_code == 404
    # opening again publishes nothing twice: the same traces, each score once
    client.get(f"{user.base}/experiments/{experiment_id}/traces")
    again = api.get("/traces", params={"condition": condition_for(experiment_id)}).json()["items"]
    assert sorted(t["id"] for t in again) == sorted(t["id"] for t in every)
    assert _stored_scores(live, one["id"]) == 2  # one per criterion
    # a condition keeps them out; an edit of one changes the trace, not the experiment's results
    kept_out = api.get("/traces", params={"condition": "NOT 'experiment' IN tags"}).json()
    assert not {t["id"] for t in kept_out["items"]} & {t["id"] for t in every}
    edited = api.patch(
        f"/traces/{one['id']}", json={"version": one["version"], "changes": {"output": "edited"}}
    )
    assert edited.status_code == 200, edited.text
    assert api.get(f"/traces/{one['id']}").json()["output"] == "edited"
    after = api.get(f"/experiments/{experiment_id}/rows", params={"limit": 100}).json()["items"]
    assert next(r for r in after if r["trace_id"] == mine["trace_id"])["answer"] == mine["answer"]


def _stored_scores(live: Any, trace_id: str) -> int:
    from sqlalchemy import func, select

    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        return session.scalar(
            select(func.count())
            .select_from(models.TraceScore)
            .where(models.TraceScore.trace_id == trace_id)
        )


def _deltas(rows: list[dict[str, Any]], criterion: str, base: str, other: str) -> Any:
    from assay.stats.pairing import paired_differences

    def value(cohort: str, example: int) -> Any:
        row = next(r for r in rows if r["cohort"] == cohort and r["example_id"] == example)
        cell = row["scores"].get(criterion) or {}
        return cell.get("value") if cell.get("status") == "ok" else None

    examples = sorted({r["example_id"] for r in rows})
    return paired_differences((e, value(base, e), value(other, e)) for e in examples)


@pytest.mark.slow  # an experiment of 30 examples × 2 cohorts × 2 criteria, on each backend
def test_the_compare_page_scales_zeros_differences_links_and_pages(live, fake):
    fake.default = behaviour()
    user = make_user(live)
    made = _objects(user, fake, examples=PAGE_SIZE + 5)
    named, rubric = made["named"]["name"], made["rubric"]["name"]
    submitted = user.api().post(
        "/experiments",
        json={
            "name": "compare me",
            "dataset_id": made["dataset"]["id"],
            "task_id": made["task"]["id"],
            "criteria_ids": [made["named"]["id"], made["rubric"]["id"]],
            "judge_model": fake.model_string(f"judge-{made['tag']}"),
            "cohorts": [
                {"name": "plain", "generator_model": fake.model_string(f"gen-{made['tag']}-b")},
                {
                    "name": "smart",
                    "generator_model": fake.model_string(f"gen-{made['tag']}-a"),
                    "system_prompt": "You are smart.",
                },
            ],
        },
    )
    assert submitted.status_code == 202, submitted.text
    experiment_id = submitted.json()["id"]
    assert _wait(user, experiment_id)["status"] == "completed"
    api = user.api()
    summary = api.get(f"/experiments/{experiment_id}/results").json()["summary"]
    rows = api.get(f"/experiments/{experiment_id}/rows", params={"limit": 500}).json()["items"]
    client = sign_in(user)
    base = f"{user.base}/experiments/{experiment_id}/compare"
    page = client.get(base, params={"criterion": named}).text

    # each cohort's cell is the API's mean, interval and coverage
    for s in summary:
        cell = re.search(
            rf'data-cohort="{s["cohort"]}" data-criterion="{re.escape(s["criterion"])}">(.*?)</td>',
            page,
            re.S,
        )
        assert cell is not None, s
        assert f"<span data-mean>{s['mean']:.3f}</span>" in cell.group(1)
        assert f"[{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]" in cell.group(1)
        assert f"{s['n_scored']}/{s['n']} scored" in cell.group(1)
    # the difference to the baseline (plain, the first cohort) is assay.stats' paired one
    smart_cell = re.search(
        rf'data-cohort="smart" data-criterion="{re.escape(named)}">(.*?)</td>', page, re.S
    ).group(1)
    difference = _deltas(rows, named, "plain", "smart")
    assert difference.mean_delta == 1.0 and difference.direction in ("higher", "one")
    shown = re.search(r"Δ ([+-][\d.]+)(?: \[([+-][\d.]+), ([+-][\d.]+)\])?", smart_cell)
    assert shown.group(1) == f"{difference.mean_delta:+.3f}"
    if difference.low is not None:
        assert (
            shown.group(2) == f"{difference.low:+.3f}"
            and shown.group(3) == f"{difference.high:+.3f}"
        )
    assert 'class="delta higher"' in smart_cell or difference.low is None

    # each criterion on its own scale; plain's zero on the function criterion is a drawn bar
    charts = dict(re.findall(r'<figure[^>]*data-criterion="([^"]+)">(.*?)</figure>', page, re.S))
    assert "scale 0–1" in charts[html.escape(named)] and "scale 1–5" in charts[html.escape(rubric)]
    bars = re.findall(
        r'<rect class="mean-bar"[^>]*height="([\d.]+)"[^>]*><title>([^<]*)</title>',
        charts[html.escape(named)],
    )
    heights = {html.unescape(tip).split(":")[0]: float(h) for h, tip in bars}
    assert set(heights) == {"plain", "smart"} and 0 < heights["plain"] < heights["smart"]
    assert (
        ">0.00</text>" in charts[html.escape(named)]
        and ">1.00</text>" in charts[html.escape(named)]
    )
    assert charts[html.escape(named)].count('<g class="whisker">') == 2

    # the examples: cohorts as columns, each answer linked to its trace, paged
    assert len(re.findall(r"<tr data-example=", page)) == PAGE_SIZE
    assert f"examples 1–{PAGE_SIZE} of {PAGE_SIZE + 5}" in page
    links = re.findall(
        rf'href="{base.rsplit("/", 1)[0]}/generations/(\d+)" data-trace-link="smart"', page
    )
    assert len(links) == PAGE_SIZE
    assert {int(i) for i in links} <= {r["trace_id"] for r in rows if r["cohort"] == "smart"}
    last = client.get(base, params={"criterion": named, "page": "2"}).text
    assert len(re.findall(r"<tr data-example=", last)) == 5
    assert f"examples {PAGE_SIZE + 1}–{PAGE_SIZE + 5} of {PAGE_SIZE + 5}" in last
    assert 'rel="first"' in last and 'rel="next"' not in last
    beyond = client.get(base, params={"criterion": named, "page": "99"}).text
    assert f"examples {PAGE_SIZE + 1}–" in beyond  # past the end: the last page
    # only where plain is below the baseline smart: every example on the function criterion
    worse = client.get(
        base, params={"criterion": named, "baseline": "smart", "worse": "plain"}
    ).text
    assert f"of {PAGE_SIZE + 5}</span>" in worse
    none_worse = client.get(
        base, params={"criterion": named, "baseline": "plain", "worse": "smart"}
    ).text
    assert "No example matches." in none_worse and "examples 0–0 of 0" in none_worse
    # unknown names fall back to the defaults, never a 500
    odd = client.get(base, params={"criterion": "<nope>", "baseline": "<x>", "page": "-3"})
    assert odd.status_code == 200 and "&lt;nope&gt;" not in odd.text
