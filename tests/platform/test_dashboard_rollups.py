"""The dashboard's hourly rollups (`storage/rollups.py`, `storage/dashboard_rollups.py`) against a
live server on SQLite and PostgreSQL: traces sent through the SDK's batch route and OTLP, some
edited (their cost) and some grown by later OTLP spans (their model and latency), then the
figures read from the rollups compared with the exact ones from the traces and with
`numpy.percentile` over the stored latencies (within the stated 0.99%); a rebuild from the traces
finds the rollups as they were kept; the exact scan's time limit answers a 422 naming the field."""

from __future__ import annotations

import math
import random
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import numpy
import pytest
from sqlalchemy import select, text

from assay.platform.server.errors import ApiError
from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_figures import figures
from assay.platform.server.storage.dashboard_rollups import time_limit
from assay.platform.server.storage.dashboard_window import window_of
from assay.platform.server.storage.rollups import (
    GAMMA,
    RELATIVE_ERROR,
    hour_of,
    latency_bin,
    percentile,
    rebuild,
)

TOLERANCE = RELATIVE_ERROR + 1e-9
HOUR = timedelta(hours=1)


def close(found: float | None, exact: float | None) -> bool:
    if exact is None or found is None:
        return found is exact
    return abs(found - exact) <= TOLERANCE * abs(exact) + 1e-9


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 2, 7, 500, 5000])
def test_percentiles_from_bins_are_within_the_stated_tolerance(seed, n):
    rng = numpy.random.default_rng(seed)
    values = rng.lognormal(6, 1.2, n)
    values[: n // 10] = 0.0  # zeros have a bin of their own and stay exact
    bins: dict[int, int] = {}
    for v in values:
        bins[latency_bin(float(v))] = bins.get(latency_bin(float(v)), 0) + 1
    for p in (0, 1, 50, 90, 95, 99, 100):
        exact = float(numpy.percentile(values, p))
        assert close(percentile(bins, p), exact), (p, percentile(bins, p), exact)
    assert percentile({}, 50) is None
    assert pytest.approx((GAMMA - 1) / (GAMMA + 1)) == RELATIVE_ERROR and RELATIVE_ERROR < 0.01


def otlp_span(trace_hex: str, span_hex: str, start: datetime, ms: float, **attributes) -> dict:
    begin = int(start.timestamp() * 1e9)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace_hex,
                                "spanId": span_hex,
                                "name": "chat",
                                "startTimeUnixNano": str(begin),
                                "endTimeUnixNano": str(begin + int(ms * 1e6)),
                                "attributes": [
                                    {"key": k, "value": {"stringValue": v}}
                                    for k, v in attributes.items()
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }


def rollup_rows(session, project_id: int) -> list[tuple]:
    R, B = models.TraceRollup, models.TraceLatencyBin
    sums = session.execute(
        select(R.hour, R.model, R.traces, R.errors, R.input_tokens, R.output_tokens, R.with_cost)
        .where(R.project_id == project_id)
        .order_by(R.hour, R.model)
    ).all()
    costs = session.scalars(
        select(R.cost).where(R.project_id == project_id).order_by(R.hour, R.model)
    ).all()
    bins = session.execute(
        select(B.hour, B.bin, B.n).where(B.project_id == project_id).order_by(B.hour, B.bin)
    ).all()
    return [tuple(r) for r in sums] + [round(c, 9) for c in costs] + [tuple(b) for b in bins]


def test_rollups_follow_ingest_edits_and_merges(live):
    key = live.key()
    now = datetime.now(timezone.utc)
    rng = random.Random(41)
    traces = []
    for index in range(120):
        # over the 7-day range and a little before it; a few in the first and last part hours
        back = rng.choice([rng.uniform(0, 7.2 * 24), rng.uniform(0, 0.5), rng.uniform(167, 168)])
        trace = {
            "id": str(uuid.uuid4()),
            "created_at": (now - timedelta(hours=back)).isoformat(),
            "input": f"q {index}",
            "output": f"a {index}",
            "metadata": {"cost": round(rng.uniform(0.001, 0.05), 5)} if index % 4 else {},
            "usage": {"input_tokens": rng.randint(10, 900), "output_tokens": rng.randint(1, 300)},
        }
        if index % 5:
            trace["model"] = ("m-a", "m-b")[index % 2]
        if index % 9:
            trace["latency_ms"] = round(rng.lognormvariate(6, 1.0), 3)
        if index % 7 == 0:
            trace["error"] = "boom"
        traces.append(trace)
    hour, minute = hour_of(now), timedelta(minutes=1)
    # windows whose ends cover hours in part: read from their traces, or from their rollups less
    # the rest of the hour's traces (over half an hour, or reaching the present), or inside one
    # hour; each gets traces near both ends and in its middle
    windows = (
        (hour - 100 * HOUR + 10 * minute, hour - 20 * HOUR + 50 * minute),
        (hour - 50 * HOUR + 45 * minute, hour - 5 * HOUR + 10 * minute),
        (hour - 2 * HOUR + 5 * minute, hour - 2 * HOUR + 40 * minute),
        (hour - 30 * HOUR + 20 * minute, now),
    )
    for since, until in windows:
        for at in (since - minute, since + minute, since + (until - since) / 2, until - minute):
            index = len(traces)
            traces.append(
                {
                    "id": str(uuid.uuid4()),
                    "created_at": at.isoformat(),
                    "model": "m-a",
                    "latency_ms": 100.0 + index,
                    "metadata": {"cost": 0.01},
                }
            )
    url = f"{live.base_url}/otlp/v1/traces"
    auth = {"Authorization": f"Bearer {key}"}
    with live.client(key) as api, httpx.Client(timeout=30) as http:
        for first in range(0, len(traces), 100):  # the SDK's batch route
            sent = api.post("/traces", json={"traces": traces[first : first + 100]})
            assert sent.status_code == 202, sent.text
        for i, trace in enumerate(traces[:6]):  # edits: a cost added, changed or removed
            meta = {"cost": 0.5 + i} if i % 3 else {"note": "no cost now"}
            answer = api.patch(
                f"/traces/{trace['id']}", json={"version": 1, "changes": {"metadata": meta}}
            )
            assert answer.status_code == 200, answer.text
        grown = []
        for i in range(5):  # OTLP: a span, then a later span that moves the model and latency
            trace_hex = uuid.uuid4().hex
            start = now - timedelta(hours=2 + 20 * i)
            first = otlp_span(trace_hex, "00f067aa0ba902b7", start, 100.0, **{"input.value": "hi"})
            assert http.post(url, json=first, headers=auth).status_code == 200
            later = otlp_span(
                trace_hex, f"{i + 1:016x}", start, 5000.0 + i, **{"gen_ai.request.model": "m-c"}
            )
            later["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"] = (
                "00f067aa0ba902b7"
            )
            assert http.post(url, json=later, headers=auth).status_code == 200
            grown.append(str(uuid.UUID(hex=trace_hex)))
        project_id = api.get("/auth/whoami").json()["project"]["id"]
        assert api.get(f"/traces/{grown[0]}").json()["model"] == "m-c"

    state = live.app.state.assay
    now = datetime.now(timezone.utc)
    for since, until in windows:
        part = window_of(None, since.isoformat(), until.isoformat(), now)
        with state.transaction() as session:
            exact = figures(DashboardRepo(session, project_id, part), exact_up_to=10**9)
            rolled = figures(DashboardRepo(session, project_id, part), exact_up_to=0)
        assert rolled["computed"]["from"] == "rollups" and exact["traces"] >= 3
        for field in ("traces", "errors", "tokens", "traces_with_cost"):
            assert rolled[field] == exact[field], (since, until, field)
        for p in ("p50", "p95", "p99"):
            assert close(rolled["latency_ms"][p], exact["latency_ms"][p]), (since, until, p)

    window = window_of("7d", None, None, now)
    with state.transaction() as session:
        exact = figures(DashboardRepo(session, project_id, window), exact_up_to=10**9)
        rolled = figures(DashboardRepo(session, project_id, window), exact_up_to=0)
        T = models.LoggedTrace
        stored = session.scalars(
            select(T.latency_ms).where(
                T.project_id == project_id,
                T.created_at >= window.since,
                T.created_at < window.until,
                T.latency_ms.is_not(None),
            )
        ).all()
    assert exact["computed"]["from"] == "traces" and rolled["computed"]["from"] == "rollups"
    assert rolled["computed"]["latency_tolerance"] == round(RELATIVE_ERROR, 4)
    assert 80 < rolled["traces"] == exact["traces"] < 141
    for field in ("errors", "tokens", "traces_with_cost"):
        assert rolled[field] == exact[field], field
    assert math.isclose(rolled["cost"], exact["cost"], rel_tol=1e-9)
    strip = [{k: v for k, v in m.items() if k != "cost"} for m in exact["models"]]
    assert [{k: v for k, v in m.items() if k != "cost"} for m in rolled["models"]] == strip
    assert any(m["model"] == "m-c" and m["traces"] == 5 for m in rolled["models"])
    for mine, theirs in zip(rolled["series"], exact["series"], strict=True):
        assert (mine["start"], mine["traces"], mine["errors"], mine["tokens"]) == (
            theirs["start"],
            theirs["traces"],
            theirs["errors"],
            theirs["tokens"],
        )
        for p in ("p50", "p95", "p99"):
            assert close(mine["latency_ms"][p], theirs["latency_ms"][p]), (mine, theirs)
    assert rolled["latency_ms"]["n"] == len(stored) == exact["latency_ms"]["n"]
    for p in (50, 95, 99):
        assert close(rolled["latency_ms"][f"p{p}"], float(numpy.percentile(stored, p)))
        assert exact["latency_ms"][f"p{p}"] == pytest.approx(float(numpy.percentile(stored, p)))

    with state.transaction() as session:  # the kept rollups equal a rebuild from the traces
        kept = rollup_rows(session, project_id)
        assert kept
        assert rebuild(session, project_id) == 120 + 16 + 5
        session.flush()
        assert rollup_rows(session, project_id) == kept


def test_the_api_and_page_say_where_figures_come_from(live):
    key = live.key()
    now = datetime.now(timezone.utc)
    trace = {"id": str(uuid.uuid4()), "created_at": now.isoformat(), "latency_ms": 12.0}
    with live.client(key) as api:
        assert api.post("/traces", json={"traces": [trace]}).status_code == 202
        plain = api.get("/dashboard", params={"range": "1d"}).json()
        assert plain["computed"]["from"] == "traces" and "1 traces" in plain["computed"]["why"]
        narrowed = api.get("/dashboard", params={"range": "1d", "condition": "latency_ms > 5"})
        assert narrowed.json()["computed"]["from"] == "traces"
        assert "condition" in narrowed.json()["computed"]["why"]
        assert narrowed.json()["traces"] == 1


def test_the_exact_scan_stops_at_its_time_limit(live):
    state = live.app.state.assay
    window = window_of("1d", None, None, datetime.now(timezone.utc))
    slow = (
        "SELECT pg_sleep(3)"
        if live.backend == "postgresql"
        else "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
        "WHERE x < 300000000) SELECT count(*) FROM c"
    )
    with state.sessions() as session:
        repo = DashboardRepo(session, 1, window, where=text("1 = 1"))
        with pytest.raises(ApiError) as caught, time_limit(repo, 0.3):
            session.execute(text(slow))
        session.rollback()
        assert caught.value.status == 422 and caught.value.field == "condition"
        assert "longer than 0.3 s" in caught.value.message
        with time_limit(repo, 5.0):  # a quick query under the limit is answered
            assert session.execute(text("SELECT 1")).scalar() == 1


def test_ingest_goes_on_while_a_dashboard_read_is_open(live):
    """The dashboard only reads: on SQLite its transaction takes no write lock (every other
    one does), so a trace sent while it is open is stored at once, not after it ends."""
    key = live.key()
    trace = {"id": str(uuid.uuid4()), "latency_ms": 5.0}
    with live.client(key) as api:
        assert api.post("/traces", json={"traces": [trace]}).status_code == 202
        project_id = api.get("/auth/whoami").json()["project"]["id"]
        window = window_of("1d", None, None, datetime.now(timezone.utc))
        with live.app.state.assay.transaction() as session:
            found = figures(DashboardRepo(session, project_id, window))
            assert found["traces"] == 1
            later = {"id": str(uuid.uuid4()), "latency_ms": 6.0}
            sent = api.post("/traces", json={"traces": [later]}, timeout=8)
            assert sent.status_code == 202, sent.text
