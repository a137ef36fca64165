"""A session's own scores in Debian's chromium (Playwright): the session page shows the latest
score of each criterion above the conversation, as the criterion's words, with the judge's reason
or the error, and at 390 px it still fits the screen. The scores are stored as a session-scope
evaluator stores them (`SessionRuns.add_scores`); judging them is the API tests' part."""

from __future__ import annotations

import uuid

import pytest

from tests.platform.ui.conftest import browser_sign_in, ingest, make_user
from tests.platform.ui.test_evaluators_http import CORRECT


@pytest.mark.slow  # a browser page
def test_the_session_page_shows_the_session_scores_at_390_px(ui_live, browser):
    from assay.platform.server.storage.session_evaluations import SessionRuns

    user = make_user(ui_live, fresh=True)
    assert user.api().post("/criteria", json=CORRECT).status_code == 201
    chat = f"chat-{uuid.uuid4().hex[:6]}"
    ingest(
        user,
        {"input": "Capital of France?", "output": "Paris.", "metadata": {"session_id": chat}},
        {"input": "And Italy?", "output": "Rome.", "metadata": {"session_id": chat}},
    )
    common = {"session_id": chat, "source": "evaluator:Chats@v1", "content_key": "2:9"}
    reason = "the user asked for two capitals and got both, " * 4
    with ui_live.app.state.assay.transaction() as session:
        SessionRuns(session, user.project_id).add_scores(
            [
                {**common, "criterion": "Correct", "value": 0.0, "traces": 1, "outcome": {}},
                {
                    **common,
                    "criterion": "Correct",
                    "value": 1.0,
                    "traces": 2,
                    "outcome": {"status": "ok", "value": 1.0, "reason": reason},
                },
                {
                    **common,
                    "criterion": "task_completion",
                    "value": None,
                    "traces": 2,
                    "outcome": {
                        "status": "error",
                        "error_type": "TrajectoryUnavailable",
                        "error_message": "session cannot be read as a trajectory",
                    },
                },
            ]
        )
    page = browser_sign_in(browser, user, viewport={"width": 390, "height": 844})
    page.goto(f"{user.base}/sessions/{chat}")
    scores = page.locator("#session-scores")
    scores.wait_for()
    correct = scores.locator('[data-criterion="Correct"]')
    assert correct.count() == 1  # the latest only
    assert "Correct yes (1)" in correct.inner_text()  # the criterion's words
    assert "2 turns judged" in correct.inner_text()
    failed = scores.locator('[data-criterion="task_completion"]').inner_text()
    assert "TrajectoryUnavailable: session cannot be read as a trajectory" in failed
    box = scores.bounding_box()
    conversation = page.locator("#conversation").bounding_box()
    assert box is not None and conversation is not None and box["y"] < conversation["y"]
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, f"the session page is {wide} px wide at 390 px"
    page.context.close()
