"""Sessions: the traces of one conversation, grouped by `logged_traces.session_id` (filled at
ingest from metadata `session_id` / OTLP `session.id`, else `conversation_id`). The list of a
project's sessions (traces, first and last time; latest first) and one session's traces in time
order both read the (project, session, time) index, never the metadata JSON."""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import func, select

from assay.platform.server.errors import invalid, not_found
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, iso

T = models.LoggedTrace
SESSION_TRACES_MAX = 1000  # traces of one session given at once (oldest first)
OFFSET_MAX = 100_000  # how deep the list of sessions pages


class SessionRepo(ProjectScoped):
    def list(
        self, *, limit: int, offset: int = 0
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        """Sessions with their trace count and first and last time, the latest-active first
        (then by id); returns (page, offset of the next page or None)."""
        if offset < 0 or offset > OFFSET_MAX:
            raise invalid("cursor", f"sessions page past {OFFSET_MAX:,} sessions")
        last = func.max(T.created_at)
        query = (
            self._columns(
                T, T.session_id, func.count().label("traces"), func.min(T.created_at), last
            )
            .where(T.session_id.is_not(None))
            .group_by(T.session_id)
            .order_by(last.desc(), T.session_id)
            .offset(offset)
            .limit(limit + 1)
        )
        rows = builtins.list(self.session.execute(query))
        items = [
            {"session_id": sid, "traces": int(n), "first_at": iso(first), "last_at": iso(end)}
            for sid, n, first, end in rows[:limit]
        ]
        return items, (offset + limit if len(rows) > limit else None)

    def count(self) -> int:
        """How many sessions the project has."""
        query = self._columns(T, func.count(func.distinct(T.session_id))).where(
            T.session_id.is_not(None)
        )
        return int(self.session.scalar(query) or 0)

    def traces(
        self, session_id: str, *, limit: int = SESSION_TRACES_MAX
    ) -> builtins.list[models.LoggedTrace]:
        """The session's traces, oldest first (by time, then arrival); 404 for no such session."""
        query = (
            self._select(T)
            .where(T.session_id == session_id)
            .order_by(T.created_at, T.seq)
            .limit(limit)
        )
        rows = builtins.list(self.session.scalars(query))
        if not rows:
            raise not_found("session", session_id)
        return rows

    def size(self, session_id: str) -> int:
        """How many traces the session has (all of them, also past `SESSION_TRACES_MAX`)."""
        query = self._columns(T, T.seq).where(T.session_id == session_id)
        return int(self.session.scalar(select(func.count()).select_from(query.subquery())) or 0)


__all__ = ["OFFSET_MAX", "SESSION_TRACES_MAX", "SessionRepo"]
