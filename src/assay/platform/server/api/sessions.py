"""Routes of sessions under /api/v1/sessions: the project's sessions (trace count, first and last
time; the latest trace's first, paged) and one session's traces in time order, whole, as
`GET /traces/{id}` gives them, with the whole session's scores and labels; people's labels of a
session (`POST`/`GET /sessions/{id}/labels`, through a session-scope review queue or not). A
trace is in a session when its metadata names one (`session_id`, OTLP's `session.id`, else
`conversation_id`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from assay.platform.server.api.deps import Reader, Writer, page, state_of
from assay.platform.server.api.traces import author_of
from assay.platform.server.errors import invalid, not_found
from assay.platform.server.schemas.traces import LabelIn
from assay.platform.server.storage.repos import MAX_PAGE, decode_cursor
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.review_sessions import SessionQueue
from assay.platform.server.storage.session_evaluations import SessionRuns, latest_by_criterion
from assay.platform.server.storage.session_labels import SessionLabels, session_label_json
from assay.platform.server.storage.sessions import SESSION_TRACES_MAX, SessionRepo
from assay.platform.server.storage.trace_rows import SESSION_MAX
from assay.platform.server.storage.traces import TraceRepo

router = APIRouter(prefix="/api/v1")

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=20)]
SessionId = Annotated[str, Path(min_length=1, max_length=SESSION_MAX)]
COUNT_MOST = 10_000  # sessions counted at most: past it the count says "more than"


@router.get("/sessions")
def list_sessions(
    request: Request, principal: Reader, limit: Limit = 100, cursor: Cursor = None
) -> dict[str, Any]:
    """Sessions, the one with the latest trace first: `{session_id, traces, first_at,
    last_at}` each, and `total`, the number of sessions of the project (counted up to
    `COUNT_MOST`; `total_more` says there are more than that)."""
    with state_of(request).transaction() as session:
        repo = SessionRepo(session, principal.project_id)
        items, following = repo.list(limit=limit, before=decode_cursor(cursor))
        answer = page(items, None if following is None else str(following))
        total = repo.count(most=COUNT_MOST)
        answer["total"] = min(total, COUNT_MOST)
        answer["total_more"] = total > COUNT_MOST
        return answer


@router.get("/sessions/{session_id}")
def get_session(session_id: SessionId, request: Request, principal: Reader) -> dict[str, Any]:
    """The session's traces, oldest first (at most `SESSION_TRACES_MAX`; `total` counts them
    all), each whole with its latest scores and labels, and the session's own scores (`scores`,
    the latest per criterion; `score_history`); 404 when no trace names the session."""
    with state_of(request).transaction() as session:
        rows = SessionRepo(session, principal.project_id).traces(session_id)
        total = SessionRepo(session, principal.project_id).size(session_id)
        traces = TraceRepo(session, principal.project_id).as_json(rows)
        history = SessionRuns(session, principal.project_id).scores(session_id)
        labels = SessionLabels(session, principal.project_id).history(session_id)
    return {
        "object_type": "session",
        "session_id": session_id,
        "traces": traces,
        "total": total,
        "truncated": total > len(traces),
        "first_at": traces[0]["created_at"],
        "last_at": traces[-1]["created_at"],
        "limit": SESSION_TRACES_MAX,
        # scores of the whole session (session-scope online evaluators): the latest per
        # criterion, and every one stored, newest first
        "scores": latest_by_criterion(history),
        "score_history": history,
        # people's labels of the whole session (session-scope review queues): the latest per
        # criterion, each with the content it was given on (traces, content_key)
        "labels": latest_by_criterion([session_label_json(row) for row in labels]),
    }


@router.post("/sessions/{session_id}/labels", status_code=201)
def add_session_label(
    session_id: SessionId, body: LabelIn, request: Request, principal: Writer
) -> dict[str, Any]:
    """Append a label of the whole session, on its current content; its author is the calling
    key. Given through a queue, the queue must be a session queue holding the session, and the
    item is done once every criterion of the queue is labelled."""
    with state_of(request).transaction() as session:
        queues = QueueRepo(session, principal.project_id)
        sessions = SessionQueue(session, principal.project_id)
        queue = None
        if body.queue is not None:
            queue = queues.by_name(body.queue)
            if queue is None:
                raise invalid("queue", f"no review queue named {body.queue!r} in this project")
            if queue.scope != "session":
                raise invalid(
                    "queue",
                    f"review queue {body.queue!r} holds traces: label its traces at "
                    "/traces/{id}/labels",
                )
            if sessions.item(queue, session_id) is None:
                raise invalid(
                    "queue", f"session {session_id!r} is not in review queue {body.queue!r}"
                )
        content = sessions.summaries([session_id]).get(session_id)
        if content is None:
            raise not_found("session", session_id)
        label = SessionLabels(session, principal.project_id).add(
            session_id,
            criterion=body.criterion,
            value=body.value,
            author=author_of(principal),
            traces=content["traces"],
            content_key=content["content_key"],
            queue_id=queue.id if queue is not None else None,
            comment=body.comment,
        )
        done = sessions.after_label(queue, session_id) if queue is not None else False
        return {**session_label_json(label), "item_done": done}


@router.get("/sessions/{session_id}/labels")
def list_session_labels(
    session_id: SessionId, request: Request, principal: Reader
) -> dict[str, Any]:
    """The session's labels, newest first (at most `LABELS_MAX`; labels are never changed); 404
    when the project knows no such session (no trace names it and it has no label), as for
    `GET /sessions/{id}`, so another project's session reads as absent, not as unlabelled."""
    with state_of(request).transaction() as session:
        rows = SessionLabels(session, principal.project_id).history(session_id)
        if not rows and not SessionRepo(session, principal.project_id).size(session_id):
            raise not_found("session", session_id)
        return page([session_label_json(r) for r in rows], None)


__all__ = ["router"]
