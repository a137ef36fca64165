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
    ServerUnavailable,
    Task,
    ValidationFailed,
)
from assay.platform.sdk.client import Client

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
        assert ragmetrics.login(key, base_url=base) is False
        with pytest.raises(AuthError, match="revoked"):
            Client(key, base).request("GET", "/auth/whoami")
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
    banner = server.stderr.read().decode()  # where everything is, and how to let people in
    assert f"web UI   {base}/ui/" in banner and f"API      {base}/api/v1" in banner
    assert "assay users add NAME --project P" in banner and "assay keys create" in banner
    assert f"{base}/otlp/v1/traces" in banner


def test_login_reads_the_environment(live, monkeypatch):
    key = live.key()
    monkeypatch.setenv("ASSAY_BASE_URL", live.base_url)
    monkeypatch.delenv("ASSAY_API_KEY", raising=False)
    monkeypatch.setenv("RAGMETRICS_API_KEY", key)
    assert ragmetrics.login() is True
    monkeypatch.setenv("ASSAY_API_KEY", "assay_0123456789abcdef_" + "z" * 43)  # ASSAY_API_KEY wins
    assert ragmetrics.login() is False  # the key it read is refused: ASSAY_API_KEY was used
    with pytest.raises(AuthError, match="invalid API key"):
        Client(os.environ["ASSAY_API_KEY"], live.base_url).request("GET", "/auth/whoami")


def test_sdk_errors_are_one_line(live, caplog):
    port = free_port()
    # login returns False, as the seed's signature says, and logs why
    with caplog.at_level("WARNING", logger="assay.platform"):
        assert ragmetrics.login(live.key(), base_url=f"http://127.0.0.1:{port}") is False
        assert ragmetrics.login("sk-not-ours", base_url=live.base_url) is False
    said = [record.getMessage() for record in caplog.records]
    assert any(f"cannot reach the assay server at http://127.0.0.1:{port}" in m for m in said)
    assert any("malformed API key" in m for m in said)
    with pytest.raises(ServerUnavailable, match="cannot reach the assay server"):
        Client(live.key(), f"http://127.0.0.1:{port}").request("GET", "/auth/whoami")
    with pytest.raises(AuthError, match="malformed API key"):
        Client("sk-not-ours", live.base_url).request("GET", "/auth/whoami")
    assert ragmetrics.login(live.key(scopes=("read",)), base_url=live.base_url) is True
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


def test_off_turns_off_trace_logging_only(live, monkeypatch):
    monkeypatch.delenv("ASSAY_API_KEY", raising=False)
    monkeypatch.delenv("RAGMETRICS_API_KEY", raising=False)
    # no key: the switch alone, nothing to ask
    assert ragmetrics.login(off=True, base_url="http://127.0.0.1:9") is True
    # with a key: logged in, tracing off, every other call works
    assert ragmetrics.login(live.key(), base_url=live.base_url, off=True) is True
    from assay.platform.sdk.tracing import recording

    assert not recording()
    saved = Task(name="t-off", system_prompt="s")
    saved.save()
    assert Task.download(name="t-off").id == saved.id


def test_no_key_is_a_clear_error(monkeypatch):
    from assay.platform.sdk.client import Client

    with pytest.raises(AuthError, match="no API key"):
        Client(None, "http://127.0.0.1:9").request("GET", "/auth/whoami")
