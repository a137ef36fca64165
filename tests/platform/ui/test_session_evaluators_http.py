"""Session-scope evaluators in the web UI over plain HTTP on SQLite and PostgreSQL: the evaluators
form takes a scope, a settle interval and the built-in agent criteria (a bad interval is named
beside its field, nothing created), the evaluator's section says it judges whole sessions and
counts sessions, and the session page shows the whole session's scores once it is judged (the
loopback judge says yes when the last answer names Paris)."""

from __future__ import annotations

import re
import time

import pytest

from tests.models.fake_openai import dynamic, ok
from tests.platform.ui.conftest import csrf_in, ingest, make_user, sign_in
from tests.platform.ui.test_evaluators_http import CORRECT


def _form(client, url, **data):
    token = csrf_in(client.get(url).text)
    return client.post(url, data={"csrf_token": token, **data}, follow_redirects=True)


@pytest.mark.slow  # ~5 s a backend on a loaded machine: a user signs in, a session is judged
def test_the_form_makes_a_session_evaluator_whose_scores_show_on_the_session(live, fake):
    def choose(request):
        judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
        return ok("yes" if judged and "Paris" in judged.group(1) else "no")

    fake.default = dynamic(choose)
    user = make_user(live)
    assert user.api().post("/criteria", json=CORRECT).status_code == 201
    client = sign_in(user)
    page_url = f"{user.base}/evaluators"
    empty = client.get(page_url).text
    assert 'name="scope"' in empty and 'value="step_efficiency"' in empty  # an agent criterion
    judge = fake.model_string("ui-session-judge")
    fields = {"name": "Chats", "criteria": ["Correct", "step_efficiency"], "judge_model": judge}
    refused = _form(client, page_url, **fields, scope="session", settle_seconds="-5")
    assert refused.status_code == 422 and 'data-problem="settle_seconds"' in refused.text
    assert user.api().get("/evaluators").json()["items"] == []

    made = _form(client, page_url, **fields, scope="session", settle_seconds="0")
    assert made.status_code == 200, made.text
    (saved,) = user.api().get("/evaluators").json()["items"]
    assert (saved["scope"], saved["settle_seconds"]) == ("session", 0)
    assert saved["criteria"] == ["Correct", "step_efficiency"]
    section = re.search(rf'id="evaluator-{saved["id"]}".*?</section>', made.text, re.S).group(0)
    assert "whole sessions, once quiet for 0 s" in section and "Sessions scored" in section

    ingest(
        user,
        {"input": "Capital of France?", "output": "Rome.", "metadata": {"session_id": "c-1"}},
        {"input": "Are you sure?", "output": "Paris.", "metadata": {"session_id": "c-1"}},
    )
    deadline = time.monotonic() + 120
    while not user.api().get("/evaluators/Chats").json()["sessions"]["scored"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    html = client.get(f"{user.base}/sessions/c-1").text
    scores = re.search(r'id="session-scores".*?</section>', html, re.S).group(0)
    assert re.search(r'data-criterion="Correct"><span class="chip">Correct yes \(1\)', scores)
    assert "2 turns judged" in scores and "evaluator:Chats@v1" in scores
    assert 'data-criterion="step_efficiency"' in scores  # skipped: no tool call, said so
    assert "no tool call" in scores or "skipped" in scores
