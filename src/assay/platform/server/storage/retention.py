"""Retention's deletions (`RetentionRepo`): a project's traces created before a cutoff, removed a
bounded batch at a time, each batch in its own short transaction (`jobs/retention.py` runs them
with pauses between, so ingest is never held up for longer than one batch).

A batch deletes the traces (their payload and spans are columns of the row), and with them, by
their foreign keys' ON DELETE CASCADE, their scores, labels, revisions, review-queue items and
online evaluations (migration 0013 indexes those tables by (project_id, trace_id), so each
cascade is an index lookup), and takes the traces' parts out of the dashboard's rollups in the
same transaction, so the dashboard never counts a deleted trace.

Each project keeps its traces for its own horizon: `projects.retention_days` when its admins set
one (`set_retention_days`), else the server's default; `horizons` says which projects have one
and how long it is, so the job deletes each project's traces by its own cutoff."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update

from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped
from assay.platform.server.storage.rollups import PART_COLUMNS, Deltas, part_of

T = models.LoggedTrace


class RetentionRepo(ProjectScoped):
    def delete_batch(self, cutoff: datetime, limit: int) -> int:
        """Delete up to `limit` of the project's traces created before `cutoff` (oldest first);
        returns how many were deleted."""
        rows = self.session.execute(
            self._columns(T, T.seq, *PART_COLUMNS)
            .where(T.created_at < cutoff)
            .order_by(T.created_at)
            .limit(limit)
        ).all()
        if not rows:
            return 0
        deltas = Deltas(self.project_id)
        for row in rows:
            deltas.add(part_of(row), -1)
        self.session.execute(
            delete(T).where(T.project_id == self.project_id, T.seq.in_([r.seq for r in rows]))
        )
        deltas.write(self.session)
        return len(rows)


def retention_days_of(session: Any, project_id: int) -> int | None:
    """The project's own horizon in days (None: it keeps the server's default)."""
    project = session.get(models.Project, project_id)
    return None if project is None else project.retention_days


def set_retention_days(session: Any, project_id: int, days: int | None) -> None:
    """Set the project's own horizon (checked by the caller: 1 to `RETENTION_DAYS_MAX`), or None
    to keep the server's default."""
    session.execute(
        update(models.Project).where(models.Project.id == project_id).values(retention_days=days)
    )


def horizons(session: Any, default: float | None) -> dict[int, float]:
    """Each project whose traces expire, with its horizon in days: its own setting, else
    `default` (the server's; None: only projects with a setting of their own expire)."""
    P = models.Project
    query = select(P.id, P.retention_days).order_by(P.id)
    if default is None:
        query = query.where(P.retention_days.is_not(None))
    return {
        int(ident): float(own) if own is not None else float(default or 0)
        for ident, own in session.execute(query)
    }


__all__ = [
    "RetentionRepo",
    "horizons",
    "retention_days_of",
    "set_retention_days",
]
