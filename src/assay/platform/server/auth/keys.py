"""API keys: `assay_<key_id>_<secret>`. Only HMAC-SHA256(pepper, secret) is stored; the check
compares in constant time and costs the same whether or not the key id exists.

Scopes: `ingest` (send traces), `read` (GET), `write` (create, change, delete, run; implies read),
`admin` (everything).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import overload

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.errors import UsageError
from assay.platform.server.storage import models

PREFIX = "assay_"
SCOPES = ("ingest", "read", "write", "admin")
DEFAULT_SCOPES = ("ingest", "read", "write")
_KEY = re.compile(r"^assay_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})$")
_DUMMY = "0" * 64


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key of one project with its scopes."""

    project_id: int
    project_name: str
    key_id: str
    scopes: frozenset[str]
    expires_at: datetime | None

    def allows(self, scope: str) -> bool:
        if "admin" in self.scopes or scope in self.scopes:
            return True
        return scope == "read" and "write" in self.scopes


class AuthFailed(Exception):
    """The key is missing, malformed, unknown, wrong, expired or revoked (the message says which,
    except that unknown and wrong read the same)."""


def digest(pepper: bytes, secret: str) -> str:
    return hmac.new(pepper, secret.encode(), hashlib.sha256).hexdigest()


@overload
def aware(moment: datetime) -> datetime: ...
@overload
def aware(moment: None) -> None: ...
def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands datetimes back naive; they were stored in UTC."""
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment


def check_scopes(scopes: list[str] | tuple[str, ...]) -> list[str]:
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise UsageError(
            f"scopes must be among {', '.join(SCOPES)}, got {', '.join(scopes) or 'none'}"
        )
    return sorted(set(scopes), key=SCOPES.index)


def project(session: Session, name: str, *, create: bool = True) -> models.Project:
    if not name or len(name) > 200:
        raise UsageError("a project name is 1 to 200 characters")
    found = session.scalar(select(models.Project).where(models.Project.name == name))
    if found is None:
        if not create:
            raise UsageError(f"no project named {name!r}")
        found = models.Project(name=name)
        session.add(found)
        session.flush()
    return found


def create_key(
    session: Session,
    pepper: bytes,
    *,
    project_name: str = "default",
    scopes: tuple[str, ...] | list[str] = DEFAULT_SCOPES,
    expires_in_days: float | None = None,
    name: str = "",
) -> tuple[str, models.ApiKey]:
    """A new key for `project_name` (created if new); returns the full key, shown only this once."""
    scope_list = check_scopes(list(scopes))
    if expires_in_days is not None and not 0 < expires_in_days <= 36_500:
        raise UsageError("--expires-in is a number of days between 0 and 36500")
    owner = project(session, project_name)
    key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
    expires = (
        datetime.now(timezone.utc) + timedelta(days=expires_in_days) if expires_in_days else None
    )
    row = models.ApiKey(
        key_id=key_id,
        project_id=owner.id,
        name=name,
        secret_hmac=digest(pepper, secret),
        scopes=scope_list,
        expires_at=expires,
    )
    session.add(row)
    session.flush()
    return f"{PREFIX}{key_id}_{secret}", row


def authenticate(session: Session, pepper: bytes, token: str) -> Principal:
    match = _KEY.match(token.strip())
    if match is None:
        raise AuthFailed("malformed API key: expected assay_<key id>_<secret>")
    key_id, secret = match.groups()
    row = session.scalar(select(models.ApiKey).where(models.ApiKey.key_id == key_id))
    expected = row.secret_hmac if row is not None else _DUMMY
    if not hmac.compare_digest(digest(pepper, secret), expected) or row is None:
        raise AuthFailed("invalid API key")
    if row.revoked_at is not None:
        raise AuthFailed("this API key was revoked")
    expires = aware(row.expires_at)
    if expires is not None and expires <= datetime.now(timezone.utc):
        raise AuthFailed("this API key has expired")
    owner = session.get(models.Project, row.project_id)
    assert owner is not None
    return Principal(owner.id, owner.name, key_id, frozenset(row.scopes), expires)


def list_keys(session: Session, project_name: str | None = None) -> list[tuple[models.ApiKey, str]]:
    query = select(models.ApiKey, models.Project.name).join(
        models.Project, models.Project.id == models.ApiKey.project_id
    )
    if project_name:
        query = query.where(models.Project.name == project_name)
    return [(key, name) for key, name in session.execute(query.order_by(models.ApiKey.id))]


def revoke(session: Session, key_id: str) -> models.ApiKey:
    """Revoke by key id (the part after `assay_`), or by the whole key."""
    match = _KEY.match(key_id.strip())
    if match:
        key_id = match.group(1)
    row = session.scalar(select(models.ApiKey).where(models.ApiKey.key_id == key_id))
    if row is None:
        raise UsageError(f"no API key with id {key_id!r} (see `assay keys list`)")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(timezone.utc)
    return row


__all__ = [
    "DEFAULT_SCOPES",
    "PREFIX",
    "SCOPES",
    "AuthFailed",
    "Principal",
    "authenticate",
    "create_key",
    "list_keys",
    "revoke",
]
