"""The online evaluators page over plain HTTP on SQLite and PostgreSQL: it lists each evaluator
with its status as the API gives it, the form creates one (a problem is named beside its field,
what was typed kept, nothing created), pause/resume/backfill act, and another project's
evaluator is a 404. The judge is never called here (paused, or no matching trace)."""

from __future__ import annotations

import re

from tests.platform.ui.conftest import csrf_in, ingest, make_user, sign_in

CORRECT = {
    "name": "Correct",
    "criteria_type": "llm_judge",
    "output_type": "bool",
    "header": "Is it right?",
    "bool_true": "yes",
    "bool_false": "no",
}


def _form(client, url, **data):
    token = csrf_in(client.get(url).text)
    return client.post(url, data={"csrf_token": token, **data}, follow_redirects=True)


def test_the_page_lists_creates_pauses_and_names_problems(live):
    user = make_user(live, fresh=True)
    assert user.api().post("/criteria", json=CORRECT).status_code == 201
    client = sign_in(user)
    page_url = f"{user.base}/evaluators"
    empty = client.get(page_url)
    assert empty.status_code == 200 and 'id="no-evaluators"' in empty.text
    assert f'href="{user.base}/evaluators">Evaluators</a>' in empty.text  # in the nav

    refused = _form(
        client,
        page_url,
        name="Prod <b>answers</b>",
        condition="metadata.env = 'prod'",
        sample_rate="1.5",
        criteria="Correct",
        judge_model="vllm/judge@http://127.0.0.1:9/v1",
    )
    assert refused.status_code == 422
    assert 'data-problem="sample_rate"' in refused.text and "from 0 to 1" in refused.text
    assert 'value="Prod &lt;b&gt;answers&lt;/b&gt;"' in refused.text  # kept, escaped
    assert user.api().get("/evaluators").json()["items"] == []
    unknown = _form(
        client, page_url, name="E", criteria="Nope", judge_model="vllm/judge@http://127.0.0.1:9/v1"
    )
    assert unknown.status_code == 422 and 'data-problem="criteria"' in unknown.text

    made = _form(
        client,
        page_url,
        name="Prod <b>answers</b>",
        condition="metadata.env = 'prod'",
        sample_rate="0.25",
        criteria="Correct",
        judge_model="vllm/judge@http://127.0.0.1:9/v1",
        daily_budget="100",
    )
    assert made.status_code == 200, made.text  # the redirect to the page, followed
    api_view = user.api().get("/evaluators").json()["items"]
    assert [(e["name"], e["sample_rate"], e["daily_budget"]) for e in api_view] == [
        ("Prod <b>answers</b>", 0.25, 100)
    ]
    ident = api_view[0]["id"]
    html = made.text
    section = re.search(rf'id="evaluator-{ident}".*?</section>', html, re.S).group(0)
    assert "Prod &lt;b&gt;answers&lt;/b&gt;" in section
    assert re.search(r"data-status>active<", section)
    assert "25.0% of matching traces" in section and "0 of 100 traces judged today" in section
    assert re.search(r"data-scored>0<", section) and re.search(r"data-skipped>0<", section)

    token = csrf_in(html)
    paused = client.post(
        f"{page_url}/{ident}/pause", data={"csrf_token": token}, follow_redirects=True
    )
    assert paused.status_code == 200
    assert user.api().get("/evaluators").json()["items"][0]["status"] == "paused"
    assert 'data-action="resume"' in paused.text
    ingest(user, {"input": "q", "output": "Paris", "metadata": {"env": "prod"}})
    backfilled = client.post(
        f"{page_url}/{ident}/backfill",
        data={"csrf_token": token, "days": "7"},
        follow_redirects=True,
    )
    assert backfilled.status_code == 200
    waiting = user.api().get("/evaluators").json()["items"][0]["traces"]["pending"]
    assert re.search(rf"data-pending>{waiting}<", backfilled.text)
    bad_days = client.post(f"{page_url}/{ident}/backfill", data={"csrf_token": token, "days": "9"})
    assert bad_days.status_code == 422 and "days" in bad_days.text
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:  # a run that failed, as the worker ends it
        session.add(
            models.Job(
                project_id=user.project_id,
                kind="online_eval",
                evaluator_id=ident,
                status="failed",
                attempts=1,
                error="OperationalError: the <database> went away",
            )
        )
    failed = client.get(page_url).text
    assert "failed: OperationalError: the &lt;database&gt; went away" in failed
    no_token = client.post(f"{page_url}/{ident}/resume", data={})
    assert no_token.status_code == 403
    assert user.api().get("/evaluators").json()["items"][0]["status"] == "paused"

    outsider = make_user(live, fresh=True)
    other = sign_in(outsider)
    assert other.get(f"/ui/p/{outsider.project_id}/evaluators").status_code == 200
    stolen = other.post(
        f"/ui/p/{outsider.project_id}/evaluators/{ident}/resume",
        data={"csrf_token": csrf_in(other.get(f"/ui/p/{outsider.project_id}/evaluators").text)},
    )
    assert stolen.status_code == 404
    assert other.get(page_url).status_code == 404  # not a member of the first project
