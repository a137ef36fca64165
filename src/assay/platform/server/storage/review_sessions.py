"""Review queues whose items are whole sessions (`scope="session"`).

The queue's condition selects traces, as for a trace queue; what enters is each matching trace's
session (a trace naming none enters nothing), one item per session: a session already in the
queue is not entered again when more of its traces match or arrive. The item holds no copy of
the session: it is read as it is when it is opened, and each label records the content it was
given on (`session_labels.traces` and `content_key`, the trace count and latest arrival number),
so a label given before the session grew says which turns it judged. A done item stays done when
its session grows; its labels keep saying what they saw.

An item is `done` once every criterion of the queue has a label on its session given through the
queue. Its judge (jobs/review_sessions.py) scores each item once per criterion, on the content it
finds, into `session_scores` with the queue's id (a score saying the judge was down,
`EndpointDown`, is asked again). Order by uncertainty and sampling work as for
traces (storage/review_sampling.py), with the session's id in place of the trace's.

Locks use `review_locks` with the key `session-item:<item id>` in the place of a trace id
(`lock_key`): session ids can be 200 characters, an item's key fits the column.
"""

from __future__ import annotations

import builtins
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func

from assay.platform.server.errors import ApiError
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, decode_cursor, iso
from assay.platform.server.storage.review_judging import standing
from assay.platform.server.storage.review_sampling import decide_items
from assay.platform.server.storage.session_labels import SessionLabels, session_texts
from assay.platform.server.storage.sessions import SESSION_TRACES_MAX, SessionRepo
from assay.platform.server.storage.trace_rows import insert_for

Q, SItem, T = models.ReviewQueue, models.ReviewSessionItem, models.LoggedTrace
Score, Lock = models.SessionScore, models.ReviewLock
INSERT_CHUNK = 1_000
LOCK_PREFIX = "session-item:"


def lock_key(item_id: int) -> str:
    """The key under which a session item is held in `review_locks`."""
    return f"{LOCK_PREFIX}{item_id}"


class SessionQueue(ProjectScoped):
    """The items of session-scope queues: routing, reading, locks' next item, the judge's side
    and the export."""

    # -- routing -------------------------------------------------------------------------------
    def enter(
        self, queue: models.ReviewQueue, where: Any, trace_ids: builtins.list[str] | None = None
    ) -> int:
        """Put the sessions of the matching traces (of `trace_ids`, or all) into `queue`;
        returns how many sessions entered anew."""
        query = self._columns(T, T.session_id).where(T.session_id.is_not(None))
        if trace_ids is not None:
            query = query.where(T.id.in_(trace_ids))
        if where is not None:
            query = query.where(where)
        # in the order of their first matching trace's arrival
        query = query.group_by(T.session_id).order_by(func.min(T.seq))
        sessions = builtins.list(self.session.scalars(query))
        if not sessions:
            return 0
        now = datetime.now(timezone.utc)
        entered = 0
        for start in range(0, len(sessions), INSERT_CHUNK):
            rows = [
                {
                    "project_id": self.project_id,
                    "queue_id": queue.id,
                    "session_id": sid,
                    "entered_at": now,
                    "status": "pending",
                }
                for sid in sessions[start : start + INSERT_CHUNK]
            ]
            statement = (
                insert_for(self.session, SItem.__table__)
                .values(rows)
                .on_conflict_do_nothing(index_elements=["project_id", "queue_id", "session_id"])
                .returning(SItem.__table__.c.id)
            )
            entered += len(builtins.list(self.session.scalars(statement)))
        return entered

    # -- reading -------------------------------------------------------------------------------
    def counts(self, queue: models.ReviewQueue) -> dict[str, int]:
        query = self._columns(SItem, SItem.status, func.count()).where(SItem.queue_id == queue.id)
        return {status: int(n) for status, n in self.session.execute(query.group_by(SItem.status))}

    def items(
        self, queue: models.ReviewQueue, *, status: str | None, limit: int, cursor: str | None
    ) -> tuple[builtins.list[models.ReviewSessionItem], str | None]:
        """The queue's items in the order they entered, a page at a time."""
        query = self._select(SItem).where(SItem.queue_id == queue.id)
        if status is not None:
            query = query.where(SItem.status == status)
        after = decode_cursor(cursor)
        if after is not None:
            query = query.where(SItem.id > after)
        rows = builtins.list(self.session.scalars(query.order_by(SItem.id).limit(limit + 1)))
        if len(rows) > limit:
            return rows[:limit], str(rows[limit - 1].id)
        return rows, None

    def summaries(self, session_ids: builtins.list[str]) -> dict[str, dict[str, Any]]:
        """Per session: its trace count, content key, first and last time (the sessions' one
        grouped read, `SessionRepo.summaries`)."""
        found = SessionRepo(self.session, self.project_id).summaries(session_ids)
        keys = ("traces", "content_key", "first_at", "last_at")
        return {sid: {k: summary[k] for k in keys} for sid, summary in found.items()}

    def item(self, queue: models.ReviewQueue, session_id: str) -> models.ReviewSessionItem | None:
        return self.session.scalar(
            self._select(SItem).where(SItem.queue_id == queue.id, SItem.session_id == session_id)
        )

    def item_by_id(self, queue: models.ReviewQueue, item_id: int) -> models.ReviewSessionItem:
        found = self.session.scalar(
            self._select(SItem).where(SItem.queue_id == queue.id, SItem.id == item_id)
        )
        if found is None:
            raise ApiError(404, "not_found", f"no item {item_id} in review queue {queue.name!r}")
        return found

    def item_json(self, item: models.ReviewSessionItem, summary: dict[str, Any] | None) -> dict:
        return {
            "object_type": "session_queue_item",
            "session_id": item.session_id,
            **(summary or {"traces": 0, "content_key": None, "first_at": None, "last_at": None}),
            "queue_item": {
                "id": item.id,
                "status": item.status,
                "entered_at": iso(item.entered_at),
                "uncertainty": item.uncertainty,
                "inclusion_probability": item.inclusion_probability,
            },
        }

    # -- labels ----------------------------------------------------------------------------------
    def after_label(self, queue: models.ReviewQueue, session_id: str) -> bool:
        """Mark the item done when the queue's criteria are all labelled through it; True when
        it became done now."""
        item = self.item(queue, session_id)
        if item is None or item.status == "done":
            return False
        labelled = SessionLabels(self.session, self.project_id).criteria_through(
            session_id, queue.id
        )
        if not labelled or not set(queue.criteria or []) <= labelled:
            return False
        item.status = "done"
        self.session.flush()
        return True

    # -- the reviewer's next item ------------------------------------------------------------------
    def next_free_item(
        self, queue_id: int, user_id: int, after: int, *, by_uncertainty: bool = False
    ) -> models.ReviewSessionItem | None:
        """As `Locks.next_free_item` for trace items: the next pending item nobody else holds."""
        now = datetime.now(timezone.utc)
        keys = self.session.scalars(
            self._columns(Lock, Lock.trace_id).where(
                Lock.queue_id == queue_id, Lock.user_id != user_id, Lock.expires_at > now
            )
        )
        held = [int(k[len(LOCK_PREFIX) :]) for k in keys if k.startswith(LOCK_PREFIX)]
        pending = self._select(SItem).where(
            SItem.queue_id == queue_id, SItem.status == "pending", SItem.id.not_in(held)
        )
        if by_uncertainty:
            ranked = pending.order_by(SItem.uncertainty.desc().nulls_last(), SItem.id)
            found = self.session.scalar(ranked.where(SItem.id != after).limit(1))
            return found if found is not None else self.session.scalar(ranked.limit(1))
        found = self.session.scalar(pending.where(SItem.id > after).order_by(SItem.id).limit(1))
        if found is None:
            found = self.session.scalar(pending.order_by(SItem.id).limit(1))
        return found

    # -- the queue's judge (jobs.review_sessions) ------------------------------------------------
    def judging_chunk(
        self, queue_id: int, after: int, limit: int
    ) -> builtins.list[models.ReviewSessionItem]:
        query = self._select(SItem).where(SItem.queue_id == queue_id, SItem.id > after)
        return builtins.list(self.session.scalars(query.order_by(SItem.id).limit(limit)))

    def judged(
        self,
        queue_id: int,
        session_ids: builtins.list[str],
        due_before: datetime | None = None,
    ) -> set[tuple[str, str]]:
        """(session id, criterion) of `session_ids` that this queue's judge has judged: its
        latest score from this queue (by id, as `latest_judged`) stands
        (`review_judging.standing`: an `EndpointDown` error is asked again once it is older
        than `due_before`)."""
        query = self._columns(
            Score, Score.session_id, Score.criterion, Score.outcome, Score.created_at
        ).where(Score.queue_id == queue_id, Score.session_id.in_(session_ids))
        rows = self.session.execute(query.order_by(Score.id)).all()
        return standing(rows, due_before)

    def latest_judged(
        self, queue_id: int, session_ids: builtins.list[str]
    ) -> dict[str, dict[str, models.SessionScore]]:
        """Per session, this queue's judge's latest score of each criterion."""
        latest: dict[str, dict[str, models.SessionScore]] = {s: {} for s in session_ids}
        query = (
            self._select(Score)
            .where(Score.queue_id == queue_id, Score.session_id.in_(session_ids))
            .order_by(Score.id)
        )
        for row in self.session.scalars(query):
            latest[row.session_id][row.criterion] = row
        return latest

    def decide(self, queue: models.ReviewQueue, unsure: dict[str, float | None]) -> int:
        """As `QueueRepo.decide`: each undecided item's uncertainty and, when the queue samples,
        whether it is kept; returns how many were left out."""
        undecided = self.session.scalars(
            self._select(SItem).where(
                SItem.queue_id == queue.id,
                SItem.session_id.in_(builtins.list(unsure)),
                SItem.status == "pending",
                SItem.inclusion_probability.is_(None),
            )
        )
        left_out = decide_items(undecided, "session_id", queue.sample_rate, queue.id, unsure)
        self.session.flush()
        return left_out

    # -- export ------------------------------------------------------------------------------------
    def export(
        self, queue: models.ReviewQueue, *, limit: int, cursor: str | None
    ) -> tuple[builtins.list[dict[str, Any]], str | None]:
        """The trace export's rows with a `session_id`: per item and labelled criterion, the
        session's content as it was labelled (its first `traces` turns: the turns before the last
        as the input, the last answer as the output, every turn's contexts; `trace_id` the last
        turn's trace), the latest label, and the latest session score of the criterion."""
        from assay.platform.server.storage.session_evaluations import SessionRuns

        items, next_cursor = self.items(queue, status=None, limit=limit, cursor=cursor)
        labels_repo = SessionLabels(self.session, self.project_id)
        rows: builtins.list[dict[str, Any]] = []
        for item in items:
            labels = labels_repo.latest(item.session_id)
            if not labels:
                continue
            scores: dict[str, dict[str, Any]] = {}
            for score in SessionRuns(self.session, self.project_id).scores(item.session_id):
                scores.setdefault(score["criterion"], score)
            traces = builtins.list(
                self.session.scalars(
                    self._select(T)
                    .where(T.session_id == item.session_id)
                    .order_by(T.created_at, T.seq)
                    .limit(SESSION_TRACES_MAX)
                )
            )
            for criterion in builtins.list(queue.criteria or []) or sorted(labels):
                label = labels.get(criterion)
                if label is None:
                    continue
                shown = traces[: label.traces] or traces
                question, answer, contexts = session_texts(shown)
                rows.append(
                    {
                        "session_id": item.session_id,
                        "trace_id": shown[-1].id if shown else None,
                        "traces": label.traces,
                        "content_key": label.content_key,
                        "input": question,
                        "output": answer,
                        "contexts": contexts,
                        "criterion": criterion,
                        "label": label.value,
                        "label_author": label.author,
                        "label_at": iso(label.created_at),
                        "label_comment": label.comment or "",
                        **session_score_columns(scores.get(criterion)),
                        "uncertainty": item.uncertainty,
                        "inclusion_probability": item.inclusion_probability or 1.0,
                    }
                )
        return rows, next_cursor


def session_score_columns(score: dict[str, Any] | None) -> dict[str, Any]:
    """The export's score fields of a session score (as `session_score_json` gives it): the
    keys of `review.SCORE_FIELDS` (not imported: review.py imports this module)."""
    if score is None:
        return dict.fromkeys(
            ("score", "score_label", "score_status", "score_reason", "score_source")
        )
    outcome = score.get("outcome") or {}
    return {
        "score": score.get("value"),
        "score_label": None,
        "score_status": outcome.get("status"),
        "score_reason": outcome.get("reason"),
        "score_source": score.get("source"),
    }


__all__ = ["LOCK_PREFIX", "SessionQueue", "lock_key", "session_score_columns"]
