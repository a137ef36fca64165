"""Per-key rate limits against a live server (10 requests a second, bursts of 3, per key): 429 with
Retry-After and a JSON error naming the limit, other keys untouched, the SDK waiting as asked."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from assay.errors import UsageError
from assay.platform.sdk.client import Client, RateLimited
from assay.platform.server.rate_limit import parse_rate_limit

from .conftest import LiveServer, start_server, stop_server

RATE, BURST = 10.0, 3


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def limited(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    with pytest.MonkeyPatch.context() as patch:  # create_app reads them when it builds the app
        patch.setenv("ASSAY_RATE_LIMIT", f"{RATE:g}/s")
        patch.setenv("ASSAY_RATE_LIMIT_BURST", str(BURST))
        server = start_server(request.param, url)
    try:
        yield server
    finally:
        stop_server(server)


def _until_limited(http, path="/auth/whoami", most=50):
    answers = []
    for _ in range(most):
        answers.append(http.get(path))
        if answers[-1].status_code == 429:
            return answers
    raise AssertionError(f"no 429 in {most} requests: {[a.status_code for a in answers]}")


def test_over_the_limit_is_429_with_retry_after_per_key(limited):
    first, second = limited.key(), limited.key()
    with limited.client(first) as a, limited.client(second) as b:
        answers = _until_limited(a)
        assert [r.status_code for r in answers[:BURST]] == [200] * BURST
        refused = answers[-1]
        error = refused.json()["error"]
        assert error["code"] == "rate_limited" and error["limit"] == "10/s"
        assert error["burst"] == BURST and 0 < error["retry_after_s"] <= 1 / RATE + 0.01
        assert "10/s per API key (bursts of 3)" in error["message"]
        assert refused.headers["retry-after"] == "1"  # whole seconds, rounded up
        # another key has its own bucket
        assert b.get("/auth/whoami").status_code == 200
        # waiting as asked is enough
        time.sleep(error["retry_after_s"] + 0.02)
        assert a.get("/auth/whoami").status_code == 200
    with limited.client(None) as anonymous:  # no key: still 401, not 429
        assert all(anonymous.get("/auth/whoami").status_code == 401 for _ in range(BURST + 2))
        assert all(anonymous.get("/health").status_code == 200 for _ in range(BURST + 5))


def test_writes_are_limited_too_and_nothing_is_half_done(limited):
    with limited.client(limited.key()) as api:
        names = [f"task-{i}" for i in range(BURST + 3)]
        answers = [api.post("/tasks", json={"name": n, "generator_model": "m"}) for n in names]
        refused = [n for n, r in zip(names, answers, strict=True) if r.status_code == 429]
        assert refused, [r.status_code for r in answers]
        time.sleep(1.0)
        stored = {t["name"] for t in api.get("/tasks").json()["items"]}
        accepted = {n for n, r in zip(names, answers, strict=True) if r.status_code == 201}
        assert stored == accepted and not (stored & set(refused))


def test_the_sdk_waits_as_asked_and_gives_up_when_told(limited):
    key = limited.key()
    patient = Client(key, limited.base_url)
    try:
        started = time.monotonic()
        for _ in range(BURST + 7):  # 7 over the burst: each waits for its token
            assert patient.request("GET", "/auth/whoami")["project"]
        took = time.monotonic() - started
        assert took >= 7 / RATE * 0.8, took  # the server's pace, not a failure
    finally:
        patient.close()
    impatient = Client(limited.key(), limited.base_url, rate_limit_retries=0)
    try:
        with pytest.raises(RateLimited) as caught:
            for _ in range(50):
                impatient.request("GET", "/auth/whoami")
        assert caught.value.status == 429 and 0 < caught.value.retry_after <= 0.2
        assert "10/s per API key" in str(caught.value)
    finally:
        impatient.close()
    # a wait longer than the client's cap is not waited for
    capped = Client(limited.key(), limited.base_url, max_retry_wait=0.01)
    try:
        with pytest.raises(RateLimited):
            for _ in range(50):
                capped.request("GET", "/auth/whoami")
    finally:
        capped.close()


def test_the_rate_limit_setting_is_checked():
    limit = parse_rate_limit("600/min")
    assert (
        limit is not None and limit.rate == 10.0 and limit.burst == 10 and limit.spec == "600/min"
    )
    assert parse_rate_limit("1/h").burst == 1 and parse_rate_limit("20/s", "50").burst == 50
    assert parse_rate_limit(None) is None and parse_rate_limit("off") is None
    assert parse_rate_limit("0/s") is None
    with pytest.raises(UsageError, match=r"--rate-limit: 'fast' is not a rate; write N/s"):
        parse_rate_limit("fast")
    with pytest.raises(UsageError, match="not a rate"):
        parse_rate_limit("10/fortnight")
    with pytest.raises(UsageError, match="--rate-limit-burst: must be at least 1, got 0"):
        parse_rate_limit("10/s", 0)
    with pytest.raises(UsageError, match="ASSAY_RATE_LIMIT_BURST: 'lots' is not a whole number"):
        parse_rate_limit("10/s", "lots", source="ASSAY_RATE_LIMIT")


def test_assay_serve_refuses_a_bad_rate_limit(tmp_path):
    from typer.testing import CliRunner

    from assay.cli.app import app

    db = f"sqlite:///{tmp_path / 'x.sqlite'}"
    done = CliRunner().invoke(app, ["serve", "--db", db, "--rate-limit", "lots"])
    assert isinstance(done.exception, UsageError)  # main() prints it as one line, exit code 2
    assert "--rate-limit: 'lots' is not a rate; write N/s, N/min or N/h" in str(done.exception)
    assert not (tmp_path / "x.sqlite").exists()  # refused before the database was touched
