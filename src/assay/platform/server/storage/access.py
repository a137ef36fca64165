"""Who may use a project, as stored: users (global, by name or id), a project's members and their
roles (`MemberRepo`), and which API keys are the project's (`KeyRepo`). Hashing, sessions and the
rules of who may do what are in `auth`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped

U, M, K = models.User, models.ProjectMember, models.ApiKey


def user_by_name(session: Session, username: str) -> models.User | None:
    return session.scalar(select(U).where(U.username == username))


def username_of(session: Session, user_id: int) -> str | None:
    user = session.get(U, user_id)
    return user.username if user is not None else None


class MemberRepo(ProjectScoped):
    def members(self) -> list[Any]:
        """(user, role) of each member, by username."""
        query = self._columns(M, U, M.role).join(M, M.user_id == U.id).order_by(U.username)
        return list(self.session.execute(query))

    def membership(self, user_id: int) -> models.ProjectMember | None:
        return self.session.scalar(self._select(M).where(M.user_id == user_id))

    def remove(self, user_id: int) -> bool:
        """Take the user out of the project; False when they were not a member."""
        row = self.membership(user_id)
        if row is None:
            return False
        self.session.delete(row)
        return True


class KeyRepo(ProjectScoped):
    def owns(self, key_id: str) -> bool:
        """Whether the API key `key_id` is this project's."""
        return self.session.scalar(self._columns(K, K.id).where(K.key_id == key_id)) is not None


__all__ = ["KeyRepo", "MemberRepo", "user_by_name", "username_of"]
