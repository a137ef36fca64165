"""Routes of sessions under /api/v1/sessions: the project's sessions (trace count, first and last
time; the latest trace's first, paged) and one session's traces in time order, whole, as
`GET /traces/{id}` gives them. A trace is in a session when its metadata names one
(`session_id`, OTLP's `session.id`, else `conversation_id`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from assay.platform.server.api.deps import Reader, page, state_of
from assay.platform.server.storage.repos import MAX_PAGE, decode_cursor
from assay.platform.server.storage.session_evaluations import SessionRuns, latest_by_criterion
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
    }


__all__ = ["router"]
