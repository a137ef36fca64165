"""Retention's deletions (`RetentionRepo`): a project's traces created before a cutoff, removed a
bounded batch at a time, each batch in its own short transaction (`jobs/retention.py` runs them
with pauses between, so ingest is never held up for longer than one batch).

A batch deletes the traces (their payload and spans are columns of the row), and with them, by
their foreign keys' ON DELETE CASCADE, their scores, labels, revisions, review-queue items and
online evaluations (migration 0013 indexes those tables by (project_id, trace_id), so each
cascade is an index lookup), and takes the traces' parts out of the dashboard's rollups in the
same transaction, so the dashboard never counts a deleted trace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, select

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


def projects_with_traces_before(session: Any, cutoff: datetime) -> list[int]:
    """The projects that hold a trace created before `cutoff`."""
    found = select(models.Project.id).where(
        select(T.seq).where(T.project_id == models.Project.id, T.created_at < cutoff).exists()
    )
    return list(session.scalars(found.order_by(models.Project.id)))


__all__ = ["RetentionRepo", "projects_with_traces_before"]
