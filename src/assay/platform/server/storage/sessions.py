"""Sessions: the traces of one conversation, grouped by `logged_traces.session_id` (filled at
ingest from metadata `session_id` / OTLP `session.id`, else `conversation_id`). The list of a
project's sessions (traces, first and last time; the latest arrival first) and one session's
traces in time order read the (project, session, time) index, never the metadata JSON."""

from __future__ import annotations

import builtins
from typing import Any

from sqlalchemy import func, select

from assay.platform.server.errors import not_found
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, iso
from assay.platform.server.storage.session_evaluations import content_key

T = models.LoggedTrace
SESSION_TRACES_MAX = 1000  # traces of one session given at once (oldest first)
BATCH = 2000  # traces read at once while listing sessions
SCAN_MAX = 200_000  # traces one page of the list reads at most (then it ends early, with a cursor)
LISTED = ("session_id", "traces", "first_at", "last_at")  # what the list gives of a session


class SessionRepo(ProjectScoped):
    def list(
        self, *, limit: int, before: int | None = None
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        """Sessions with their trace count and first and last time, the one with the latest
        arrival first; returns (page, cursor of the next page or None).

        Not a GROUP BY over every session (half a second with 100,000 of them): the newest
        traces that name a session are read in batches, below `before` (an arrival number),
        and a session is listed where its latest trace is met; each batch's sessions are then
        summed over the (project, session, time) index. The cursor is the latest arrival number
        of the page's last session."""
        found: builtins.list[dict[str, Any]] = []
        seen: set[str] = set()
        below = before
        looked = 0
        while len(found) < limit and looked < SCAN_MAX:
            query = self._columns(T, T.seq, T.session_id).where(T.session_id.is_not(None))
            if below is not None:
                query = query.where(T.seq < below)
            batch = builtins.list(self.session.execute(query.order_by(T.seq.desc()).limit(BATCH)))
            if not batch:
                break
            looked += len(batch)
            below = batch[-1].seq
            fresh = [sid for _seq, sid in batch if sid not in seen]
            fresh = builtins.list(dict.fromkeys(fresh))
            seen.update(fresh)
            summary = self.summaries(fresh)
            for sid in fresh:
                latest = summary[sid]
                if before is not None and latest["seq"] >= before:
                    continue  # listed on an earlier page, where its latest trace is
                found.append(latest)
                if len(found) == limit:
                    break
            if len(batch) < BATCH:
                break
        items = [{k: row[k] for k in LISTED} for row in found]
        if len(found) == limit:
            return items, (found[-1]["seq"] if self._any_below(found[-1]["seq"]) else None)
        if looked >= SCAN_MAX and below is not None and self._any_below(below):
            return items, below  # the bounded read ended: the next page goes on below it
        return items, None

    def summaries(self, session_ids: builtins.list[str]) -> dict[str, dict[str, Any]]:
        """Per session of `session_ids` that has traces: its id, trace count, first and last
        time, latest arrival number (`seq`) and content key, in one grouped read over the
        (project, session, time) index. The list of sessions and a session queue's items read
        this one query."""
        if not session_ids:
            return {}
        query = (
            self._columns(
                T,
                T.session_id,
                func.count(),
                func.min(T.created_at),
                func.max(T.created_at),
                func.max(T.seq),
            )
            .where(T.session_id.in_(session_ids))
            .group_by(T.session_id)
        )
        return {
            sid: {
                "session_id": sid,
                "traces": int(n),
                "first_at": iso(first),
                "last_at": iso(end),
                "seq": int(seq),
                "content_key": content_key(int(n), int(seq)),
            }
            for sid, n, first, end, seq in self.session.execute(query)
        }

    def _any_below(self, seq: int) -> bool:
        query = self._columns(T, T.seq).where(T.session_id.is_not(None), T.seq < seq).limit(1)
        return self.session.scalar(query) is not None

    def count(self, most: int | None = None) -> int:
        """How many sessions the project has; with `most`, counting stops past it (the answer
        is then `most + 1`): distinct values read in index order, stopped early."""
        query = self._columns(T, T.session_id).where(T.session_id.is_not(None)).distinct()
        if most is not None:
            query = query.limit(most + 1)
        return int(self.session.scalar(select(func.count()).select_from(query.subquery())) or 0)

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


__all__ = ["SESSION_TRACES_MAX", "SessionRepo"]
