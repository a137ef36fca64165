"""The dashboard page over plain HTTP on SQLite and PostgreSQL: the projects list links to it
(a member of one project lands on it: the demo browser test), it shows the API's figures and a chart of each kind as inline SVG without
any script, names a bad range or condition beside its field (200, not an error page), escapes
what it echoes, and is a 404 to someone outside the project. The chart layout's numbers are
pinned without a server."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from assay.platform.server.storage import models
from assay.platform.server.ui import dashboard_charts as charts
from tests.platform.ui.conftest import ingest, make_user, sign_in


def _traffic(user):
    now = datetime.now(timezone.utc)
    ids = ingest(
        user,
        *[
            {
                "created_at": (now - timedelta(hours=5 * i + 1)).isoformat(),
                "input": f"q{i}",
                "output": f"a{i}",
                "model": "gpt-4o" if i % 2 else "claude-3-haiku",
                "latency_ms": 100.0 + 10 * i,
                "usage": {"input_tokens": 50, "output_tokens": 5},
                "metadata": {"cost": 0.01},
                **({"error": "Timeout"} if i % 5 == 0 else {}),
            }
            for i in range(20)
        ],
    )
    scores = [
        {"trace_id": t, "criterion": "Relevance", "value": 1 + i % 5} for i, t in enumerate(ids)
    ]
    assert user.api().post("/traces/scores", json={"scores": scores}).status_code == 201
    return ids


def test_the_landing_page_is_the_dashboard_with_the_apis_figures_for_members_only(live):
    make_user(live)  # the server's shared reviewer, a member of this project and of...
    user = make_user(live)  # ...this one at least, so /ui/ lists projects
    _traffic(user)
    client = sign_in(user)
    landing = client.get("/ui/")  # the list of projects (one project: a redirect to its dashboard)
    assert f'<a href="{user.base}/dashboard">{user.project}</a>' in landing.text
    page = client.get(f"{user.base}/dashboard", params={"range": "7d"})
    assert page.status_code == 200
    html = page.text
    figures = user.api().get("/dashboard", params={"range": "7d"}).json()
    assert figures["traces"] == 20 and figures["errors"] == 4
    assert re.search(r'data-figure="traces">20<', html)
    assert re.search(r'data-figure="error_rate">20\.0%<', html)
    for chart_id in ("volume", "errors", "latency", "tokens", "cost", "score-0", "labels"):
        assert f'id="chart-{chart_id}"' in html, chart_id
    assert html.count('<svg role="img"') == 6  # labels: none given, said in words instead
    assert "nothing in this range" in html
    assert "<script>" not in html.split("</head>")[1]  # charts are drawn without a script
    assert 'href="' + user.base + '/dashboard">Dashboard</a>' in html  # the nav's first link
    elsewhere = live.new_project()
    live.key(elsewhere)  # made with a key, without this user as a member
    with live.app.state.assay.transaction() as session:
        theirs = session.scalar(select(models.Project.id).where(models.Project.name == elsewhere))
    assert client.get(f"/ui/p/{theirs}/dashboard").status_code == 404


def test_problems_are_named_beside_their_field(live):
    user = make_user(live)
    client = sign_in(user)
    bad = client.get(f"{user.base}/dashboard", params={"condition": "model = <b>"})
    assert bad.status_code == 200
    assert 'id="dash-problem"' in bad.text and "condition" in bad.text
    assert "<b>" not in bad.text.split("<main>")[1]  # echoed escaped
    custom = client.get(f"{user.base}/dashboard", params={"range": "custom"})
    assert "since: a custom range needs a start" in custom.text
    assert 'class="has-problem">From' in custom.text
    backwards = client.get(
        f"{user.base}/dashboard",
        params={"range": "custom", "since": "2026-02-01T00:00", "until": "2026-01-01T00:00"},
    )
    assert "until: must be later than since" in backwards.text
    hourly = client.get(
        f"{user.base}/dashboard",
        params={"range": "custom", "since": "2026-01-01T00:00", "until": "2026-01-01T12:00"},
    )
    assert "by hour" in hourly.text and 'id="dash-problem"' not in hourly.text


def test_the_chart_layout():
    starts = [datetime(2026, 1, d, tzinfo=timezone.utc) for d in (1, 2, 3)]
    bars = charts.stacked_bars(
        "Traces", "c", starts, "day", [("ok", "#000", [3, 0, 8]), ("failed", "#f00", [1, 0, 2])]
    )
    assert [r.tip for r in bars.rects] == [
        "2026-01-01: 3 ok",
        "2026-01-01: 1 failed",
        "2026-01-03: 8 ok",
        "2026-01-03: 2 failed",
    ]
    tallest = max(float(r.height) for r in bars.rects if r.tip.endswith("8 ok"))
    plot = charts.HEIGHT - charts.TOP - charts.BOTTOM
    assert tallest == plot * 8 / 10  # the y axis runs to 10, the round number above 10
    assert [t.text for t in bars.y_ticks] == ["0", "5", "10"]
    line = charts.lines_over_time("L", "l", starts, "day", [("p50", "#000", [1.0, None, 3.0])])
    assert line.lines == [] and len(line.dots) == 2  # a gap: no line across the empty day
    banded = charts.lines_over_time(
        "S", "s", starts, "day", [("m", "#000", [3.2, 3.5, 4.1])],
        bands=[("#000", [2.9, 3.0, 3.8], [3.6, 3.9, 4.4])], from_zero=False,
    )  # fmt: skip
    assert [t.text for t in banded.y_ticks] == ["2.5", "3.5", "4.5"]  # round steps around them
    assert len(banded.bands) == 1 and len(banded.bands[0].points.split()) == 6
    assert charts.short(1871, compact=True) == "1.87k" and charts.short(0.0123) == "0.0123"
    assert charts.nice_top(0) == 1.0 and charts.nice_top(101) == 200


def test_the_evaluator_coverage_chart():
    from assay.platform.server.ui.dashboard import evaluator_chart

    assert evaluator_chart([]) is None  # no evaluator: no chart
    chart = evaluator_chart(
        [
            {
                "name": "r",
                "version": 2,
                "status": "active",
                "matching": 10,
                "scored": 6,
                "error": 1,
                "pending": 0,
                "skipped_budget": 1,
                "judge_down": 1,
                "coverage": 0.6,
            },
        ]
    )
    assert chart is not None
    name = "r v2 (active): 60% of 10"
    assert [r.tip for r in chart.rects] == [
        f"{name}: 6 scored",
        f"{name}: 1 failed",
        f"{name}: 1 over budget",
        f"{name}: 1 judge down",
        f"{name}: 1 not sampled",  # the bar is as long as the traces it matches
    ]
    widths = [float(r.width) for r in chart.rects]
    assert widths[0] == pytest.approx(6 * widths[1]) and widths[4] == pytest.approx(widths[1])
