"""Routes of logged traces under /api/v1/traces: batched idempotent ingest, list (summaries, with
a condition; whole traces with `full=true`), get, edit with a version check, revisions, labels, and adding traces to a dataset
(scores: `api/scores.py`). Ingest takes a key with the `ingest` or the `write` scope."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from assay.platform.server.api.deps import Reader, Writer, page, state_of
from assay.platform.server.auth.keys import Principal
from assay.platform.server.errors import ApiError, invalid, not_found
from assay.platform.server.schemas.traces import (
    CONDITION_MAX,
    LabelIn,
    ToDataset,
    TraceBatch,
    TracePatch,
)
from assay.platform.server.storage.evaluators import EvaluatorRepo
from assay.platform.server.storage.repos import MAX_PAGE, iso
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.trace_pages import TraceFilter
from assay.platform.server.storage.trace_rows import SESSION_MAX, label_json
from assay.platform.server.storage.traces import TraceRepo

router = APIRouter(prefix="/api/v1")

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=20)]
ConditionQuery = Annotated[str | None, Query(max_length=CONDITION_MAX)]
RawTraceId = Annotated[str, Path(max_length=64)]
SessionQuery = Annotated[str | None, Query(max_length=SESSION_MAX)]


def ingester(request: Request) -> Principal:
    principal = request.scope.get("assay.principal")
    if principal is None:
        raise ApiError(401, "unauthorized", "missing API key")
    if not (principal.allows("ingest") or principal.allows("write")):
        raise ApiError(403, "forbidden", "this API key lacks the 'ingest' (or 'write') scope")
    return principal


Ingester = Annotated[Principal, Depends(ingester)]


def trace_id_of(raw: str) -> str:
    """The canonical form of a trace id from a path; a non-UUID simply names no trace."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise not_found("trace", raw) from None


def author_of(principal: Principal) -> str:
    return f"key:{principal.key_id}"


def ingest_traces(state: Any, project_id: int, traces: list[Any]) -> dict[str, Any]:
    """Store a batch and route the new traces into the queues they match and to the online
    evaluators that take them, in one transaction."""
    with state.transaction() as session:
        stored, duplicates = TraceRepo(session, project_id).ingest(traces)
        entered = QueueRepo(session, project_id).route(stored)
        EvaluatorRepo(session, project_id).route(stored)
    return {"accepted": len(stored), "duplicates": duplicates, "queued": entered}


@router.post("/traces", status_code=202)
def post_traces(body: TraceBatch, request: Request, principal: Ingester) -> dict[str, Any]:
    return ingest_traces(state_of(request), principal.project_id, body.traces)


@router.get("/traces")
def list_traces(
    request: Request,
    principal: Reader,
    limit: Limit = 100,
    cursor: Cursor = None,
    condition: ConditionQuery = None,
    full: bool = False,
    session_id: SessionQuery = None,
) -> dict[str, Any]:
    """Newest first; `condition` is a review-queue condition (a bad one is a 422 naming it),
    `session_id` keeps one session's traces. Each item is a summary (`trace_rows.summary_json`:
    a few hundred bytes, whatever the trace holds); `full=true` gives whole traces, spans and
    raw payloads included, as `GET /traces/{id}` does."""
    with state_of(request).transaction() as session:
        where = QueueRepo(session, principal.project_id).where(condition) if condition else None
        if session_id:
            where = TraceFilter(condition=where, session_id=session_id).where()
        repo = TraceRepo(session, principal.project_id)
        if full:
            rows, next_cursor = repo.list(limit=limit, cursor=cursor, where=where)
            return page(repo.as_json(rows), next_cursor)
        summaries, next_cursor = repo.summaries(limit=limit, cursor=cursor, where=where)
        return page(repo.summaries_json(summaries), next_cursor)


@router.post("/traces/to-dataset")
def traces_to_dataset(body: ToDataset, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return TraceRepo(session, principal.project_id).to_dataset(body.trace_ids, body.dataset)


@router.get("/traces/{trace_id}")
def get_trace(trace_id: RawTraceId, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, principal.project_id)
        return repo.as_json([repo.get(trace_id_of(trace_id))])[0]


@router.patch("/traces/{trace_id}")
def edit_trace(
    trace_id: RawTraceId, body: TracePatch, request: Request, principal: Writer
) -> dict[str, Any]:
    """Change input, output, contexts, metadata or tags of the trace at `version`; a trace that
    moved on since is a 409 and nothing is written."""
    changes = {f: getattr(body.changes, f) for f in body.changes.model_fields_set}
    for field in ("contexts", "metadata", "tags"):
        if field in changes and changes[field] is None:
            raise invalid(f"changes.{field}", "must not be null")
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, principal.project_id)
        row = repo.edit(trace_id_of(trace_id), body.version, changes, author_of(principal))
        return repo.as_json([row])[0]


@router.get("/traces/{trace_id}/revisions")
def trace_revisions(trace_id: RawTraceId, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        rows = TraceRepo(session, principal.project_id).revisions(trace_id_of(trace_id))
        return page(
            [
                {
                    "version": r.version,
                    "snapshot": r.snapshot,
                    "edited_by": r.edited_by,
                    "edited_at": iso(r.created_at),
                }
                for r in rows
            ],
            None,
        )


@router.post("/traces/{trace_id}/labels", status_code=201)
def add_label(
    trace_id: RawTraceId, body: LabelIn, request: Request, principal: Writer
) -> dict[str, Any]:
    """Append a label; its author is the calling key. Given through a queue, the trace must be in
    that queue, and the item is done once every criterion of the queue is labelled."""
    ident = trace_id_of(trace_id)
    with state_of(request).transaction() as session:
        queues = QueueRepo(session, principal.project_id)
        queue = None
        if body.queue is not None:
            queue = queues.by_name(body.queue)
            if queue is None:
                raise invalid("queue", f"no review queue named {body.queue!r} in this project")
            if queue.scope == "session":
                raise invalid(
                    "queue",
                    f"review queue {body.queue!r} holds sessions: label the trace's session at "
                    "/sessions/{id}/labels",
                )
            if queues.item(queue, ident) is None:
                raise invalid("queue", f"trace {ident} is not in review queue {body.queue!r}")
        label = TraceRepo(session, principal.project_id).add_label(
            ident,
            criterion=body.criterion,
            value=body.value,
            author=author_of(principal),
            queue_id=queue.id if queue is not None else None,
            comment=body.comment,
        )
        done = queues.after_label(queue, ident) if queue is not None else False
        return {**label_json(label), "item_done": done}


@router.get("/traces/{trace_id}/labels")
def list_labels(trace_id: RawTraceId, request: Request, principal: Reader) -> dict[str, Any]:
    """Every label of the trace, oldest first (labels are never changed or removed)."""
    ident = trace_id_of(trace_id)
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, principal.project_id)
        repo.get(ident)
        return page([label_json(r) for r in repo.label_history(ident)], None)


__all__ = ["ingest_traces", "router"]
