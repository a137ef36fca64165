"""The dashboard page says where its figures come from (SQLite and PostgreSQL): read from the
traces themselves for a small range or a condition, from the hourly rollups (with the
percentiles' tolerance) past `dashboard_rollups.EXACT_UP_TO` traces, lowered here to 0."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from assay.platform.server.storage import dashboard_rollups
from tests.platform.ui.conftest import ingest, make_user, sign_in


def test_the_page_says_whether_it_read_rollups_or_traces(live, monkeypatch):
    user = make_user(live)
    now = datetime.now(timezone.utc)
    ingest(
        user,
        *[
            {"created_at": (now - timedelta(hours=3 * i)).isoformat(), "latency_ms": 10.0 + i}
            for i in range(12)
        ],
    )
    client = sign_in(user)
    page = client.get(f"{user.base}/dashboard", params={"range": "7d"}).text
    assert 'data-computed="traces"' in page and "12 traces in the range" in page
    narrowed = client.get(
        f"{user.base}/dashboard", params={"range": "7d", "condition": "latency_ms > 15"}
    ).text
    assert 'data-computed="traces"' in narrowed and "a condition is matched" in narrowed
    assert re.search(r'data-figure="traces">6<', narrowed)
    monkeypatch.setattr(dashboard_rollups, "EXACT_UP_TO", 0)
    rolled = client.get(f"{user.base}/dashboard", params={"range": "7d"}).text
    assert 'data-computed="rollups"' in rolled and "within 1% of the exact ones" in rolled
    assert re.search(r'data-figure="traces">12<', rolled)
