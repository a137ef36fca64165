"""A review queue's page says which of how many items it shows and pages through the rest (it
used to show the first 200 and say nothing of the others)."""

from __future__ import annotations

import re

from tests.platform.ui.conftest import ingest, make_user, sign_in


def test_a_long_queue_pages_and_says_how_many(live):
    user = make_user(live)
    ingest(user, *({"input": f"question {i}", "output": "answer"} for i in range(205)))
    with user.api() as api:
        queue = api.post("/review-queues", json={"name": "long"}).json()
    client = sign_in(user)
    first = client.get(f"{user.base}/queues/{queue['id']}").text
    assert "items 1–200 of 205" in first
    assert first.count("/items/") == 200
    link = re.search(r'href="(\?after=[^"]+)"', first)
    assert link is not None
    second = client.get(f"{user.base}/queues/{queue['id']}" + link.group(1).replace("&amp;", "&"))
    assert "items 201–205 of 205" in second.text and second.text.count("/items/") == 5
    assert "?after=" not in second.text
    bad = client.get(f"{user.base}/queues/{queue['id']}?after=not-a-cursor")
    assert bad.status_code == 422 and "after" in bad.text
