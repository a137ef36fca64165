"""Review locks (`Locks`): which reviewer holds which item of a review queue, until when, and the
next item nobody else holds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import delete, select

from assay.platform.server.schemas.traces import utc
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped

LOCK_MINUTES = 5
Item, Lock = models.ReviewQueueItem, models.ReviewLock


def now() -> datetime:
    return datetime.now(timezone.utc)


class Locks(ProjectScoped):
    """Who holds which item of a review queue, until when (a reviewer holds the item they have
    open for `LOCK_MINUTES`, renewed while they stay)."""

    def holder(self, queue_id: int, trace_id: str) -> models.ReviewLock | None:
        row = self.session.scalar(
            self._select(Lock).where(Lock.queue_id == queue_id, Lock.trace_id == trace_id)
        )
        return row if row is not None and utc(row.expires_at) > now() else None

    def acquire(self, queue_id: int, trace_id: str, user_id: int) -> models.ReviewLock:
        """Take (or renew) the item for `user_id`; returns the lock, which is someone else's when
        they hold it still."""
        row = self.session.scalar(
            self._select(Lock)
            .where(Lock.queue_id == queue_id, Lock.trace_id == trace_id)
            .with_for_update()
        )
        until = now() + timedelta(minutes=LOCK_MINUTES)
        if row is None:
            row = Lock(
                project_id=self.project_id,
                queue_id=queue_id,
                trace_id=trace_id,
                user_id=user_id,
                expires_at=until,
            )
            self.session.add(row)
        elif row.user_id == user_id or utc(row.expires_at) <= now():
            row.user_id, row.expires_at = user_id, until
        self.session.flush()
        return row

    def release(self, queue_id: int, trace_id: str, user_id: int) -> None:
        self.session.execute(
            delete(Lock).where(
                Lock.project_id == self.project_id,
                Lock.queue_id == queue_id,
                Lock.trace_id == trace_id,
                Lock.user_id == user_id,
            )
        )

    def held_by_others(self, queue_id: int, user_id: int) -> Any:
        return select(Lock.trace_id).where(
            Lock.project_id == self.project_id,
            Lock.queue_id == queue_id,
            Lock.user_id != user_id,
            Lock.expires_at > now(),
        )

    def next_free_item(
        self, queue_id: int, user_id: int, after: int, *, by_uncertainty: bool = False
    ) -> models.ReviewQueueItem | None:
        """The next pending item of the queue (after item `after`, then from the start) that
        nobody but `user_id` holds; `by_uncertainty`: the one the judge was least sure of (not
        `after`, the one just left), the traces it has not judged yet last."""
        pending = self._select(Item).where(
            Item.queue_id == queue_id,
            Item.status == "pending",
            Item.trace_id.not_in(self.held_by_others(queue_id, user_id)),
        )
        if by_uncertainty:
            ranked = pending.order_by(Item.uncertainty.desc().nulls_last(), Item.id)
            found = self.session.scalar(ranked.where(Item.id != after).limit(1))
            return found if found is not None else self.session.scalar(ranked.limit(1))
        found = self.session.scalar(pending.where(Item.id > after).order_by(Item.id).limit(1))
        if found is None:
            found = self.session.scalar(pending.order_by(Item.id).limit(1))
        return found


__all__ = ["LOCK_MINUTES", "Locks"]
