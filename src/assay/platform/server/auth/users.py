"""People of the web UI: users with argon2id password hashes, project membership, and sessions.

A session is a random token in an HttpOnly, SameSite=Lax cookie; the table keeps only its SHA-256,
so a copy of the database signs nobody in. The CSRF token of a session is HMAC(pepper, token): it
needs no storage and changes with the session. API keys and sessions never stand in for each other
(the API reads only keys, the UI only its cookie).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TypedDict

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from assay.errors import UsageError
from assay.platform.server.auth.keys import aware, project
from assay.platform.server.storage import models

SESSION_COOKIE = "assay_session"
LOGIN_CSRF_COOKIE = "assay_login_csrf"
SESSION_LIFETIME = timedelta(days=7)
ROLES = ("member", "admin")
PASSWORD_MIN = 8
_USERNAME = re.compile(r"^[a-z0-9][a-z0-9_.@-]{0,99}$")


def _hasher():  # argon2-cffi is imported only where passwords are handled
    from argon2 import PasswordHasher

    return PasswordHasher()


# a hash to verify against when the user does not exist, so both cases cost the same
_DUMMY_HASH: str | None = None


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def check_username(username: str) -> str:
    if not _USERNAME.match(username):
        raise UsageError(
            "a username is 1 to 100 characters: lower-case letters, digits and . _ @ - "
            f"(starting with a letter or digit), got {username!r}"
        )
    return username


def check_password(password: str) -> str:
    if len(password) < PASSWORD_MIN:
        raise UsageError(f"a password has at least {PASSWORD_MIN} characters")
    if len(password) > 1_000:
        raise UsageError("a password has at most 1000 characters")
    return password


def add_member(session: Session, user: models.User, project_name: str, role: str) -> None:
    if role not in ROLES:
        raise UsageError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    owner = project(session, project_name)
    found = session.scalar(
        select(models.ProjectMember).where(
            models.ProjectMember.project_id == owner.id, models.ProjectMember.user_id == user.id
        )
    )
    if found is None:
        session.add(models.ProjectMember(project_id=owner.id, user_id=user.id, role=role))
    else:
        found.role = role
    session.flush()


def create_user(
    session: Session,
    username: str,
    password: str,
    *,
    projects: list[str] | tuple[str, ...] = ("default",),
    role: str = "member",
    display_name: str = "",
) -> models.User:
    """A new user, member of `projects` (created if new) with `role`."""
    check_username(username)
    check_password(password)
    if len(display_name) > 200:
        raise UsageError("a display name has at most 200 characters")
    if session.scalar(select(models.User.id).where(models.User.username == username)):
        raise UsageError(f"a user named {username!r} already exists")
    user = models.User(
        username=username, display_name=display_name, password_hash=hash_password(password)
    )
    session.add(user)
    session.flush()
    for name in projects:
        add_member(session, user, name, role)
    return user


def verify_login(session: Session, username: str, password: str) -> models.User | None:
    """The user if the password is right (and the user enabled); None otherwise, in about the
    same time whether or not the user exists. An outdated hash is upgraded on the way."""
    from argon2.exceptions import InvalidHashError, VerificationError

    global _DUMMY_HASH
    hasher = _hasher()
    user = session.scalar(select(models.User).where(models.User.username == username))
    if user is None:
        _DUMMY_HASH = _DUMMY_HASH or hasher.hash(secrets.token_hex(16))
        with contextlib.suppress(VerificationError):
            hasher.verify(_DUMMY_HASH, password)
        return None
    try:
        hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if user.disabled_at is not None:
        return None
    if hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hasher.hash(password)
    return user


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(session: Session, user: models.User) -> str:
    """A new session for `user`; returns the cookie's token (kept nowhere else)."""
    token = secrets.token_urlsafe(32)
    now = datetime.now(timezone.utc)
    session.execute(delete(models.UiSession).where(models.UiSession.expires_at < now))
    session.add(
        models.UiSession(
            token_hash=token_hash(token), user_id=user.id, expires_at=now + SESSION_LIFETIME
        )
    )
    session.flush()
    return token


def end_session(session: Session, token: str) -> None:
    session.execute(
        delete(models.UiSession).where(models.UiSession.token_hash == token_hash(token))
    )


def csrf_for(pepper: bytes, token: str) -> str:
    return hmac.new(pepper, b"csrf:" + token.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Membership:
    project_id: int
    project_name: str
    role: str


@dataclass(frozen=True)
class Viewer:
    """The signed-in person of a request, with the projects they belong to."""

    user_id: int
    username: str
    display_name: str
    csrf: str
    projects: dict[str, Membership]

    @property
    def author(self) -> str:
        """How labels, scores and edits name this person."""
        return f"user:{self.username}"

    @property
    def shown_name(self) -> str:
        return self.display_name or self.username


def load_viewer(session: Session, pepper: bytes, token: str) -> Viewer | None:
    if not token or len(token) > 200:
        return None
    row = session.scalar(
        select(models.UiSession).where(models.UiSession.token_hash == token_hash(token))
    )
    if row is None or aware(row.expires_at) <= datetime.now(timezone.utc):
        return None
    user = session.get(models.User, row.user_id)
    if user is None or user.disabled_at is not None:
        return None
    memberships = {
        name: Membership(pid, name, role)
        for pid, name, role in session.execute(
            select(models.Project.id, models.Project.name, models.ProjectMember.role)
            .join(models.ProjectMember, models.ProjectMember.project_id == models.Project.id)
            .where(models.ProjectMember.user_id == user.id)
            .order_by(models.Project.name)
        )
    }
    return Viewer(user.id, user.username, user.display_name, csrf_for(pepper, token), memberships)


def add_user(
    db: str | None,
    username: str,
    password: str,
    *,
    projects: list[str],
    role: str = "member",
    display_name: str = "",
) -> None:
    """What `assay users add` does, on the database directly (no server needed)."""
    from assay.platform.server.auth.admin import _open
    from assay.platform.server.storage.db import session_factory

    engine, _url = _open(db)
    try:
        with session_factory(engine).begin() as session:
            create_user(
                session,
                username,
                password,
                projects=projects or ["default"],
                role=role,
                display_name=display_name,
            )
    finally:
        engine.dispose()


class UserRow(TypedDict):
    """One line of `assay users list`."""

    username: str
    name: str
    projects: list[str]  # "name (role)"
    disabled: bool


def list_users(db: str | None) -> list[UserRow]:
    """What `assay users list` shows: each user and their projects with roles (never a hash)."""
    from assay.platform.server.auth.admin import _open
    from assay.platform.server.storage.db import session_factory

    engine, _url = _open(db)
    try:
        with session_factory(engine).begin() as session:
            users = list(session.scalars(select(models.User).order_by(models.User.username)))
            roles: dict[int, list[str]] = {}
            for user_id, name, role in session.execute(
                select(models.ProjectMember.user_id, models.Project.name, models.ProjectMember.role)
                .join(models.Project, models.Project.id == models.ProjectMember.project_id)
                .order_by(models.Project.name)
            ):
                roles.setdefault(user_id, []).append(f"{name} ({role})")
            return [
                {
                    "username": u.username,
                    "name": u.display_name,
                    "projects": roles.get(u.id, []),
                    "disabled": u.disabled_at is not None,
                }
                for u in users
            ]
    finally:
        engine.dispose()


__all__ = [
    "LOGIN_CSRF_COOKIE",
    "ROLES",
    "SESSION_COOKIE",
    "Membership",
    "Viewer",
    "add_member",
    "add_user",
    "create_user",
    "csrf_for",
    "end_session",
    "list_users",
    "load_viewer",
    "start_session",
    "verify_login",
]
