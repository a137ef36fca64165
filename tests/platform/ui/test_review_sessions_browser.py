"""A session review item in Debian's chromium (Playwright) at 390 px: the whole conversation
(each turn's user message and answer, a tool call) above the queue's criterion, the page no
wider than the screen, and the keyboard labels it (3, then Enter) on the content shown."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.platform.ui.conftest import browser_sign_in, five_point_criterion, ingest, make_user


@pytest.mark.slow  # a browser page
def test_the_session_review_page_fits_390_px_and_labels_from_the_keyboard(ui_live, browser):
    user = make_user(ui_live, fresh=True)
    five_point_criterion(user)
    chat = f"chat-{uuid.uuid4().hex[:6]}"
    meta = {"session_id": chat}
    ingest(
        user,
        {
            "input": "Find me a flight to Lisbon on a long and winding afternoon " * 3,
            "output": "I found flight TP123 leaving at 14:05.",
            "metadata": meta,
            "spans": [
                {"id": "r", "name": "agent", "kind": "other"},
                {
                    "id": "t",
                    "parent_id": "r",
                    "name": "search_flights",
                    "kind": "function",
                    "input": {"to": "LIS"},
                    "output": ["TP123"],
                },
            ],
        },
        {"input": "Book it.", "output": "Booked: TP123.", "metadata": meta},
    )
    with user.api() as api:
        made = api.post(
            "/review-queues",
            json={"name": "Trips", "criteria": ["Helpfulness"], "scope": "session"},
        )
        assert made.status_code == 201, made.text
        queue_id = made.json()["id"]
    page = browser_sign_in(browser, user, viewport={"width": 390, "height": 844})
    page.goto(f"{user.base}/queues/{queue_id}/next")
    page.wait_for_url(re.compile(rf".*/queues/{queue_id}/sessions/\d+$"))
    conversation = page.locator("#conversation")
    conversation.wait_for()
    assert conversation.locator("li.turn").count() == 2
    text = conversation.inner_text()
    assert "TP123 leaving at 14:05" in text and "Booked: TP123." in text
    assert "search_flights" in text
    form = page.locator("#review-form")
    assert form.locator('fieldset[data-kind="likert"] legend').inner_text() == "Helpfulness"
    box, talk = form.bounding_box(), conversation.bounding_box()
    assert box is not None and talk is not None and talk["y"] < box["y"]
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, f"the session review page is {wide} px wide at 390 px"

    page.keyboard.press("3")
    assert form.locator('input[name="c0"][value="3"]').is_checked()
    page.keyboard.press("Enter")
    page.locator("#queue-done").wait_for()  # the only item is done: nothing left
    with user.api() as api:
        label = api.get(f"/sessions/{chat}").json()["labels"]["Helpfulness"]
    assert (label["value"], label["traces"]) == (3, 2)
    page.context.close()
