"""What `assay keys` does, on the database directly (no server needed)."""

from __future__ import annotations

from typing import Any

from assay.platform.server.auth import keys
from assay.platform.server.config import pepper, resolve_db_url
from assay.platform.server.storage.db import make_engine, migrate, session_factory
from assay.platform.server.storage.repos import iso


def _open(db: str | None) -> tuple[Any, str]:
    url = resolve_db_url(db)
    engine = make_engine(url)
    migrate(engine)
    return engine, url


def create_key(
    db: str | None = None,
    *,
    project: str = "default",
    scopes: list[str] | tuple[str, ...] = keys.DEFAULT_SCOPES,
    expires_in_days: float | None = None,
    name: str = "",
) -> str:
    engine, url = _open(db)
    try:
        with session_factory(engine).begin() as session:
            key, _row = keys.create_key(
                session,
                pepper(url),
                project_name=project,
                scopes=scopes,
                expires_in_days=expires_in_days,
                name=name,
            )
        return key
    finally:
        engine.dispose()


def list_keys(db: str | None = None, *, project: str | None = None) -> list[dict[str, Any]]:
    engine, _url = _open(db)
    try:
        with session_factory(engine).begin() as session:
            return [
                {
                    "key_id": key.key_id,
                    "project": project_name,
                    "name": key.name,
                    "scopes": list(key.scopes),
                    "created_at": iso(key.created_at),
                    "expires_at": iso(key.expires_at),
                    "revoked_at": iso(key.revoked_at),
                }
                for key, project_name in keys.list_keys(session, project)
            ]
    finally:
        engine.dispose()


def revoke_key(db: str | None, key_id: str) -> str:
    engine, _url = _open(db)
    try:
        with session_factory(engine).begin() as session:
            return keys.revoke(session, key_id).key_id
    finally:
        engine.dispose()


__all__ = ["create_key", "list_keys", "revoke_key"]
