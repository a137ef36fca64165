"""Review queues: storage, and the routing of traces into them.

A trace enters a queue when it matches the queue's condition: at ingest, in the same transaction
that stores it (so a trace is never stored without entering the queues it matches), and, when a
queue is created or its condition changes, every stored trace that matches then. Items are never
removed by a condition change. A queue with a `judge_model` and criteria gets a `review_judge` job
whenever traces enter it; the worker scores every item not yet scored by that queue (an item
whose score says its judge was down, `EndpointDown`, is asked again: storage/review_judging.py).

An item is `done` once every criterion of the queue has a label on its trace given through the
queue (a queue without criteria: once it has one label); a done trace is added to the queue's
dataset, when it has one.

A queue with `scope="session"` holds the sessions of the matching traces instead, one item per
session, in `review_session_items`: `enter`, `counts` and `delete` hand those to
`storage/review_sessions.py`, which has the rest of their side.
"""

from __future__ import annotations

import builtins
import contextlib
from datetime import datetime, timezone
from typing import Any, cast

from sqlalchemy import Table, func, select

from assay.platform.server.errors import ApiError, conflict, not_found
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, decode_cursor, iso
from assay.platform.server.storage.review_judging import JUDGE_JOB, request_judging, standing
from assay.platform.server.storage.review_sampling import decide_items
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trace_rows import insert_for
from assay.platform.server.storage.traces import TraceRepo

Q, Item, T = models.ReviewQueue, models.ReviewQueueItem, models.LoggedTrace
INSERT_CHUNK = 1_000


def queue_json(queue: models.ReviewQueue, counts: dict[str, int] | None = None) -> dict[str, Any]:
    counts = counts or {}
    return {
        "object_type": "review_queue",
        "id": queue.id,
        "name": queue.name,
        "condition": queue.condition,
        "criteria": queue.criteria,
        "judge_model": queue.judge_model,
        "dataset": queue.dataset,
        "order": queue.order_by,
        "sample_rate": queue.sample_rate,
        "scope": queue.scope,
        "version": queue.version,
        "created_at": iso(queue.created_at),
        "updated_at": iso(queue.updated_at),
        "items": {
            "pending": counts.get("pending", 0),
            "done": counts.get("done", 0),
            # a sampling queue's traces left out of review
            **({"unsampled": counts.get("unsampled", 0)} if queue.sample_rate is not None else {}),
        },
    }


class QueueRepo(ProjectScoped):
    def where(self, condition: str) -> Any:
        return compile_condition(condition)

    # -- the queues --------------------------------------------------------------------------------
    def by_name(self, name: str) -> models.ReviewQueue | None:
        return self.session.scalar(self._select(Q).where(Q.name == name))

    def get(self, name: str) -> models.ReviewQueue:
        queue = self.by_name(name)
        if queue is None:
            raise ApiError(404, "not_found", f"no review queue named {name!r} in this project")
        return queue

    def get_by_id(self, ident: int) -> models.ReviewQueue:
        queue = self.session.scalar(self._select(Q).where(Q.id == ident))
        if queue is None:
            raise not_found("review queue", ident)
        return queue

    def list(
        self, *, limit: int, cursor: str | None
    ) -> tuple[builtins.list[models.ReviewQueue], str | None]:
        return self._page(self._select(Q), Q, limit, cursor)

    def names_by_id(self) -> dict[int, str]:
        return dict(self.session.execute(self._columns(Q, Q.id, Q.name)).all())

    def find_by_id(self, ident: int) -> models.ReviewQueue | None:
        return self.session.scalar(self._select(Q).where(Q.id == ident))

    def counts(self, queue: models.ReviewQueue) -> dict[str, int]:
        if queue.scope == "session":
            return self.sessions().counts(queue)
        query = (
            select(Item.status, func.count())
            .where(Item.project_id == self.project_id, Item.queue_id == queue.id)
            .group_by(Item.status)
        )
        return {status: int(n) for status, n in self.session.execute(query)}

    def create(self, values: dict[str, Any]) -> models.ReviewQueue:
        where = self.where(values["condition"])  # a bad condition: 422 before anything is written
        existing = self.by_name(values["name"])
        if existing is not None:
            raise conflict(
                f"a review queue named {values['name']!r} already exists (id {existing.id})",
                existing.id,
            )
        values = dict(values)
        values["order_by"] = values.pop("order", None) or "arrival"
        values["scope"] = values.get("scope") or "trace"
        queue = Q(project_id=self.project_id, version=1, **values)
        self.session.add(queue)
        self.session.flush()
        self.enter(queue, where)
        return queue

    def update(self, name: str, version: int, changes: dict[str, Any]) -> models.ReviewQueue:
        queue = self.session.scalar(self._select(Q).where(Q.name == name).with_for_update())
        if queue is None:
            raise ApiError(404, "not_found", f"no review queue named {name!r} in this project")
        if queue.version != version:
            raise ApiError(
                409,
                "conflict",
                f"review queue {name!r} was changed meanwhile: it is at version {queue.version}, "
                f"your change was made to version {version}; read it again and redo the change",
            )
        where = self.where(changes["condition"]) if "condition" in changes else None
        new_name = changes.get("name")
        if new_name is not None and new_name != queue.name and self.by_name(new_name) is not None:
            raise conflict(f"a review queue named {new_name!r} already exists")
        for field, value in changes.items():
            if field == "name" and value is None:
                continue
            if field == "order":
                field, value = "order_by", value or "arrival"
            setattr(queue, field, [] if field == "criteria" and value is None else value)
        queue.version = version + 1
        queue.updated_at = datetime.now(timezone.utc)
        self.session.flush()
        if where is not None:
            self.enter(queue, where)
        elif "judge_model" in changes or "criteria" in changes:
            self.request_judging(queue)
        return queue

    def delete(self, name: str) -> None:
        queue = self.get(name)
        items = cast(Table, Item.__table__)  # a mapped class's table is a Table
        self.session.execute(
            items.delete().where(Item.project_id == self.project_id, Item.queue_id == queue.id)
        )
        sessions = cast(Table, models.ReviewSessionItem.__table__)
        self.session.execute(
            sessions.delete().where(
                sessions.c.project_id == self.project_id, sessions.c.queue_id == queue.id
            )
        )
        self.session.delete(queue)
        self.session.flush()

    def sessions(self) -> Any:
        """The side of session-scope queues (storage/review_sessions.py)."""
        from assay.platform.server.storage.review_sessions import SessionQueue

        return SessionQueue(self.session, self.project_id)

    # -- routing -------------------------------------------------------------------------------------
    def enter(
        self, queue: models.ReviewQueue, where: Any, trace_ids: builtins.list[str] | None = None
    ) -> int:
        """Put the matching traces (of `trace_ids`, or all) into `queue`, or for a session queue
        their sessions; returns how many entered."""
        if queue.scope == "session":
            entered = self.sessions().enter(queue, where, trace_ids)
            if entered:
                self.request_judging(queue)
            return entered
        query = select(T.id).where(T.project_id == self.project_id)
        if trace_ids is not None:
            query = query.where(T.id.in_(trace_ids))
        if where is not None:
            query = query.where(where)
        matching = list(self.session.scalars(query))
        if not matching:
            return 0
        now = datetime.now(timezone.utc)
        entered = 0
        for start in range(0, len(matching), INSERT_CHUNK):  # under SQLite's bound-parameter cap
            statement = (
                insert_for(self.session, Item.__table__)
                .values(
                    [
                        {
                            "project_id": self.project_id,
                            "queue_id": queue.id,
                            "trace_id": trace_id,
                            "entered_at": now,
                            "status": "pending",
                        }
                        for trace_id in matching[start : start + INSERT_CHUNK]
                    ]
                )
                .on_conflict_do_nothing(index_elements=["project_id", "queue_id", "trace_id"])
                .returning(Item.__table__.c.id)
            )
            entered += len(list(self.session.scalars(statement)))
        if entered:
            self.request_judging(queue)
        return entered

    def route(self, trace_ids: builtins.list[str]) -> dict[str, int]:
        """At ingest: the new traces enter every queue whose condition they match."""
        entered: dict[str, int] = {}
        if not trace_ids:
            return entered
        for queue in self.session.scalars(self._select(Q).order_by(Q.id)):
            count = self.enter(queue, self.where(queue.condition), trace_ids)
            if count:
                entered[queue.name] = count
        return entered

    def request_judging(self, queue: models.ReviewQueue) -> None:
        """One queued judge job per queue at a time is enough: it scores every item still unscored
        (storage/review_judging.py, which the idle worker's wake uses too)."""
        request_judging(self.session, self.project_id, queue)

    # -- items ---------------------------------------------------------------------------------------
    def items(
        self, queue: models.ReviewQueue, *, status: str | None, limit: int, cursor: str | None
    ) -> tuple[builtins.list[tuple[models.ReviewQueueItem, models.LoggedTrace]], str | None]:
        query = (
            select(Item, T)
            .join(T, (T.project_id == Item.project_id) & (T.id == Item.trace_id))
            .where(Item.project_id == self.project_id, Item.queue_id == queue.id)
        )
        if status is not None:
            query = query.where(Item.status == status)
        after = decode_cursor(cursor)
        if after is not None:
            query = query.where(Item.id > after)
        rows = [
            (item, trace)
            for item, trace in self.session.execute(query.order_by(Item.id).limit(limit + 1))
        ]
        if len(rows) > limit:
            return rows[:limit], str(rows[limit - 1][0].id)
        return rows, None

    def item(self, queue: models.ReviewQueue, trace_id: str) -> models.ReviewQueueItem | None:
        return self.session.scalar(
            select(Item).where(
                Item.project_id == self.project_id,
                Item.queue_id == queue.id,
                Item.trace_id == trace_id,
            )
        )

    def after_label(self, queue: models.ReviewQueue, trace_id: str) -> bool:
        """Mark the item done when the queue's criteria are all labelled through it; then add the
        trace to the queue's dataset. True when the item became done now."""
        item = self.item(queue, trace_id)
        if item is None or item.status == "done":
            return False
        labelled = set(
            self.session.scalars(
                select(models.TraceLabel.criterion).where(
                    models.TraceLabel.project_id == self.project_id,
                    models.TraceLabel.trace_id == trace_id,
                    models.TraceLabel.queue_id == queue.id,
                )
            )
        )
        if not labelled or not set(queue.criteria or []) <= labelled:
            return False
        item.status = "done"
        if queue.dataset:
            # a trace that cannot be an example (no input): the label still counts
            with contextlib.suppress(ApiError):
                TraceRepo(self.session, self.project_id).to_dataset([trace_id], queue.dataset)
        self.session.flush()
        return True

    # -- the queue's judge (jobs.review_judge) ------------------------------------------------------
    def judging_chunk(
        self, queue_id: int, after: int, limit: int
    ) -> tuple[builtins.list[models.LoggedTrace], int]:
        """The traces of the queue's next `limit` items (item id over `after`, in the order they
        entered) and the id of the last of those items (`after` when there are none)."""
        T, Item = models.LoggedTrace, models.ReviewQueueItem
        query = (
            select(T, Item.id)
            .join(Item, (Item.project_id == T.project_id) & (Item.trace_id == T.id))
            .where(Item.project_id == self.project_id, Item.queue_id == queue_id, Item.id > after)
            .order_by(Item.id)
            .limit(limit)
        )
        rows = self.session.execute(query).all()
        return [trace for trace, _ in rows], (int(rows[-1][1]) if rows else after)

    def decide(self, queue: models.ReviewQueue, unsure: dict[str, float | None]) -> int:
        """Record the judge's uncertainty on the items of these traces not decided yet and, when
        the queue samples, whether each is kept for review (with the chance it had). Returns
        how many items were left out ("unsampled")."""
        undecided = self.session.scalars(
            select(Item).where(
                Item.project_id == self.project_id,
                Item.queue_id == queue.id,
                Item.trace_id.in_(list(unsure)),
                Item.status == "pending",
                Item.inclusion_probability.is_(None),
            )
        )
        left_out = decide_items(undecided, "trace_id", queue.sample_rate, queue.id, unsure)
        self.session.flush()
        return left_out

    def judged(
        self,
        queue_id: int,
        trace_ids: builtins.list[str],
        due_before: datetime | None = None,
    ) -> set[tuple[str, str]]:
        """(trace id, criterion) of `trace_ids` that this queue's judge has judged: its latest
        score of them from this queue stands (`review_judging.standing`: an `EndpointDown` error
        is asked again once it is older than `due_before`). Latest as
        `TraceRepo.latest_scores` orders them."""
        S = models.TraceScore
        query = self._columns(S, S.trace_id, S.criterion, S.outcome, S.created_at).where(
            S.queue_id == queue_id, S.trace_id.in_(trace_ids)
        )
        rows = self.session.execute(query.order_by(S.created_at, S.id)).all()
        return standing(rows, due_before)

    def export(
        self, queue: models.ReviewQueue, *, limit: int, cursor: str | None
    ) -> tuple[builtins.list[dict[str, Any]], str | None]:
        """Labelled rows: per item and criterion with a label, the trace's texts and contexts, the
        latest label (its author and comment) and the latest score, typed as it is stored: a
        number (a boolean as 1.0/0.0) in `score`, a categorical label in `score_label` (then
        `score` is None), with its status, reason and what produced it."""
        pairs, next_cursor = self.items(queue, status=None, limit=limit, cursor=cursor)
        traces = TraceRepo(self.session, self.project_id)
        ids = [t.id for _i, t in pairs]
        labels, scores = traces.latest_labels(ids), traces.latest_scores(ids)
        rows: builtins.list[dict[str, Any]] = []
        for item, trace in pairs:
            criteria = list(queue.criteria or []) or sorted(labels[trace.id])
            for criterion in criteria:
                label = labels[trace.id].get(criterion)
                if label is None:
                    continue
                score = scores[trace.id].get(criterion)
                rows.append(
                    {
                        "trace_id": trace.id,
                        "input": trace.input_text,
                        "output": trace.output_text,
                        "contexts": trace.contexts,
                        "criterion": criterion,
                        "label": label.value,
                        "label_author": label.author,
                        "label_at": iso(label.created_at),
                        "label_comment": label.comment or "",
                        **score_columns(score),
                        "uncertainty": item.uncertainty,
                        # labels of a sampling queue are weighted by 1 / this in an estimate
                        "inclusion_probability": item.inclusion_probability or 1.0,
                    }
                )
        return rows, next_cursor


def score_columns(score: models.TraceScore | None) -> dict[str, Any]:
    """The export's score fields of a criterion's latest score (all None without one)."""
    if score is None:
        return dict.fromkeys(SCORE_FIELDS)
    outcome = score.outcome or {}
    return {
        "score": score.value,
        "score_label": score.label,
        "score_status": outcome.get("status"),
        "score_reason": outcome.get("reason"),
        "score_source": score.source,
    }


SCORE_FIELDS = ("score", "score_label", "score_status", "score_reason", "score_source")

__all__ = ["JUDGE_JOB", "SCORE_FIELDS", "QueueRepo", "queue_json", "score_columns"]
