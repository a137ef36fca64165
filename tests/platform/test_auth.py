"""Every route needs a valid key; keys are stored as keyed hashes, expire, are revoked, have scopes."""

from __future__ import annotations

import os
import re
import stat

import pytest
from sqlalchemy import select
from starlette.routing import Route

from assay.platform.server.storage import models

KEY = re.compile(r"^assay_[0-9a-f]{16}_[A-Za-z0-9_-]{20,100}$")
PUBLIC = {"/api/v1/health"}  # the only route without a key


def routes(app):
    """(method, concrete path) for every route of the app, path parameters filled with 1."""
    out = []
    for route in app.routes:
        if not isinstance(route, Route):
            continue
        path = re.sub(r"\{[^}]+\}", "1", route.path)[len("/api/v1") :]
        for method in sorted(route.methods or {"GET"}):
            if method != "HEAD":
                out.append((method, path, route.path))
    return out


def test_every_route_rejects_a_missing_or_wrong_key(live):
    found = routes(live.app)
    assert len(found) >= 17  # the enumeration sees the real routes
    real = live.key()
    key_id = real.split("_")[1]
    wrong_keys = [
        "Bearer",
        "nonsense",
        "assay_",
        "assay__",
        "assay_0123456789abcdef_" + "x" * 43,
        f"assay_{key_id}_" + "y" * 43,
    ]  # a real key id with a wrong secret
    with live.client(None) as client:
        for method, path, template in found:
            if template in PUBLIC:
                assert client.request(method, path).status_code == 200
                continue
            response = client.request(method, path, content=b"{not json")
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"]["code"] == "unauthorized"
            for wrong in wrong_keys:
                response = client.request(
                    method, path, headers={"Authorization": f"Bearer {wrong}"}, json={}
                )
                assert response.status_code == 401, (method, path, wrong, response.text)
            assert (
                client.request(method, path, headers={"X-API-Key": wrong_keys[-1]}).status_code
                == 401
            )
    with live.client(real) as client:  # and the real key gets past authentication on each
        for method, path, _template in found:
            assert client.request(method, path, json={}).status_code != 401, (method, path)


def test_whoami_names_the_project_and_scopes(live):
    project = live.new_project()
    with live.client(live.key(project, scopes=("read",))) as client:
        body = client.get("/auth/whoami").json()
    assert body["project"]["name"] == project
    assert body["scopes"] == ["read"] and body["expires_at"] is None


def test_only_a_keyed_hash_of_the_secret_is_stored(live):
    key = live.key()
    key_id, secret = key[len("assay_") :].split("_", 1)
    with live.app.state.assay.transaction() as session:
        row = session.scalar(select(models.ApiKey).where(models.ApiKey.key_id == key_id))
        assert row is not None and secret not in row.secret_hmac and len(row.secret_hmac) == 64
        import hashlib
        import hmac

        assert (
            row.secret_hmac
            == hmac.new(live.app.state.assay.pepper, secret.encode(), hashlib.sha256).hexdigest()
        )


def test_pepper_file_is_private(live, assay_home):
    from assay.platform.server.config import sqlite_path

    db_file = sqlite_path(live.db_url)
    secret = (db_file.parent if db_file else assay_home) / "assay.secret"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600


def test_expired_and_revoked_keys_are_refused(live):
    from assay.platform.server.auth import keys as auth

    expired = live.key(expires_in_days=1)
    state = live.app.state.assay
    with state.transaction() as session:
        row = session.scalar(
            select(models.ApiKey).where(models.ApiKey.key_id == expired.split("_")[1])
        )
        row.expires_at = models.utcnow().replace(year=2020)
    with live.client(expired) as client:
        response = client.get("/auth/whoami")
    assert response.status_code == 401 and "expired" in response.json()["error"]["message"]
    revoked = live.key()
    with live.client(revoked) as client:
        assert client.get("/auth/whoami").status_code == 200
        with state.transaction() as session:
            auth.revoke(session, revoked.split("_")[1])
        response = client.get("/auth/whoami")
    assert response.status_code == 401 and "revoked" in response.json()["error"]["message"]


def test_scopes(live):
    project = live.new_project()
    with live.client(live.key(project, scopes=("read",))) as reader:
        assert reader.get("/tasks").status_code == 200
        response = reader.post("/tasks", json={"name": "T"})
        assert response.status_code == 403 and "'write'" in response.json()["error"]["message"]
    with live.client(live.key(project, scopes=("ingest",))) as ingest:
        assert ingest.get("/auth/whoami").status_code == 200
        assert ingest.get("/tasks").status_code == 403
    with live.client(live.key(project, scopes=("write",))) as writer:
        assert writer.post("/tasks", json={"name": "T"}).status_code == 201
        assert writer.get("/tasks").status_code == 200  # write implies read
    with live.client(live.key(project, scopes=("admin",))) as admin:
        assert admin.get("/tasks").json()["items"][0]["name"] == "T"


def test_unknown_scope_is_a_usage_error(live):
    from assay.errors import UsageError

    with pytest.raises(UsageError, match="scopes must be among"):
        live.key(scopes=("root",))


def test_key_format(live):
    assert KEY.match(live.key())
