"""`assay keys` and `assay serve` as a user runs them; `login` and the SDK's error tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx
import pytest

import assay.platform as ragmetrics
from assay.platform import (
    AuthError,
    NotFound,
    PlatformError,
    ServerUnavailable,
    Task,
    ValidationFailed,
)

from .conftest import free_port

KEY = re.compile(r"^assay_[0-9a-f]{16}_[A-Za-z0-9_-]{20,100}$")


def assay(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_keys_create_list_revoke_and_serve(tmp_path):
    env = {"ASSAY_HOME": str(tmp_path / "home")}
    db = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    created = assay(
        "keys",
        "create",
        "--db",
        db,
        "--project",
        "team",
        "--scopes",
        "read,write",
        "--expires-in",
        "30",
        env=env,
    )
    assert created.returncode == 0, created.stderr
    lines = created.stdout.splitlines()
    assert len(lines) == 1 and KEY.match(lines[0])
    key = lines[0]
    default = assay("keys", "create", env=env)  # the default database under ASSAY_HOME
    assert default.returncode == 0 and KEY.match(default.stdout.strip())
    assert (tmp_path / "home" / "assay.sqlite").exists()

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--db", db],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, (
                server.stderr.read().decode() if server.poll() is not None else "timeout"
            )
            time.sleep(0.1)
        assert ragmetrics.login(key, base_url=base) is True
        assert ragmetrics.whoami()["project"]["name"] == "team"
        Task(name="via the CLI server").save()
        listed = assay("keys", "list", "--db", db, env=env)
        assert (
            listed.returncode == 0
            and key.split("_")[1] in listed.stdout
            and "team" in listed.stdout
        )
        assert key.split("_", 2)[2] not in listed.stdout  # never the secret
        revoked = assay("keys", "revoke", key.split("_")[1], "--db", db, env=env)
        assert revoked.returncode == 0, revoked.stderr
        with pytest.raises(AuthError, match="revoked"):
            ragmetrics.login(key, base_url=base)
        unknown = assay("keys", "revoke", "0123456789abcdef", "--db", db, env=env)
        assert (
            unknown.returncode == 2
            and "no API key" in unknown.stderr
            and "Traceback" not in unknown.stderr
        )
        bad = assay("keys", "create", "--db", db, "--scopes", "root", env=env)
        assert bad.returncode == 2 and "scopes must be among" in bad.stderr
    finally:
        server.terminate()
        server.wait(30)


def test_login_reads_the_environment(live, monkeypatch):
    key = live.key()
    monkeypatch.setenv("ASSAY_BASE_URL", live.base_url)
    monkeypatch.delenv("ASSAY_API_KEY", raising=False)
    monkeypatch.setenv("RAGMETRICS_API_KEY", key)
    assert ragmetrics.login() is True
    monkeypatch.setenv("ASSAY_API_KEY", "assay_0123456789abcdef_" + "z" * 43)  # ASSAY_API_KEY wins
    with pytest.raises(AuthError, match="invalid API key"):
        ragmetrics.login()


def test_sdk_errors_are_one_line(live):
    port = free_port()
    with pytest.raises(
        ServerUnavailable, match=f"cannot reach the assay server at http://127.0.0.1:{port}"
    ):
        ragmetrics.login(live.key(), base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(AuthError, match="malformed API key"):
        ragmetrics.login("sk-not-ours", base_url=live.base_url)
    ragmetrics.login(live.key(scopes=("read",)), base_url=live.base_url)
    with pytest.raises(AuthError, match="lacks the 'write' scope"):
        Task(name="t").save()
    ragmetrics.login(live.key(), base_url=live.base_url)
    with pytest.raises(NotFound):
        Task.download(id=123456789)
    too_long = Task(name="t", system_prompt="x" * 20_001)
    with pytest.raises(
        ValidationFailed, match=r"^system_prompt: String should have at most 20000 characters$"
    ) as caught:
        too_long.save()
    assert caught.value.field == "system_prompt" and caught.value.status == 422


def test_off_sends_nothing(live):
    assert ragmetrics.login(off=True, base_url="http://127.0.0.1:9") is True
    with pytest.raises(PlatformError, match="off"):
        Task(name="t").save()


def test_no_key_is_a_clear_error(monkeypatch):
    from assay.platform.sdk.client import Client

    with pytest.raises(AuthError, match="no API key"):
        Client(None, "http://127.0.0.1:9").request("GET", "/auth/whoami")
