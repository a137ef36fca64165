"""The session pages: the project's sessions (traces, first and last time; the latest trace's
first, paged) and one session read as a conversation (`conversation.py`): per turn the user's
message, the tool calls and the assistant's answer or its error, each linked to its trace; and
the whole session's scores (session-scope online evaluators and queues' judges) and people's
labels (session-scope review queues), the latest per criterion."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.session_evaluations import SessionRuns, latest_by_criterion
from assay.platform.server.storage.session_labels import SessionLabels
from assay.platform.server.storage.sessions import SessionRepo
from assay.platform.server.storage.trace_rows import SESSION_MAX
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.conversation import conversation
from assay.platform.server.ui.score_text import scales_of, shower
from assay.platform.server.ui.waterfall import duration_label
from assay.platform.server.ui.web import UiError, member, render, state_of

router = APIRouter(prefix="/p/{project_id}")
PAGE = 50
COUNT_MOST = 10_000  # sessions counted at most


@router.get("/sessions")
def sessions(request: Request, project_id: int, cursor: str = "", at: str = "") -> Response:
    access = member(request, project_id)
    for name, value in (("cursor", cursor), ("at", at)):
        if value and (not value.isdigit() or len(value) > 12):
            raise UiError(422, f"{name}: a whole number, not {value[:20]!r}")
    start = int(at or 0)
    with state_of(request).transaction() as session:
        repo = SessionRepo(session, project_id)
        items, following = repo.list(limit=PAGE, before=int(cursor) if cursor else None)
        total = repo.count(most=COUNT_MOST)
    return render(
        request,
        "sessions.html",
        project=access.project,
        items=items,
        total=total,
        most=COUNT_MOST,
        start=start,
        first=bool(cursor),
        older=None if following is None else f"?cursor={following}&at={start + len(items)}",
    )


@router.get("/sessions/{session_id}")
def session_page(request: Request, project_id: int, session_id: str) -> Response:
    access = member(request, project_id)
    if len(session_id) > SESSION_MAX:
        raise UiError(404, f"no session {session_id[:40]!r}…")
    with state_of(request).transaction() as session:
        repo = SessionRepo(session, project_id)
        try:
            traces = repo.traces(session_id)
        except ApiError as exc:
            raise UiError(exc.status, exc.message, "Not found") from None
        total = repo.size(session_id)
        scores: dict[str, Any] = TraceRepo(session, project_id).latest_scores(
            [t.id for t in traces]
        )
        turns = conversation(traces)
        whole = [
            SimpleNamespace(label=None, **score)
            for score in latest_by_criterion(
                SessionRuns(session, project_id).scores(session_id)
            ).values()
        ]
        labels = list(SessionLabels(session, project_id).latest(session_id).values())
        named = {c for per_trace in scores.values() for c in per_trace}
        named |= {score.criterion for score in whole}
        shown = shower(scales_of(session, project_id, named))
    return render(
        request,
        "session.html",
        project=access.project,
        session_id=session_id,
        turns=turns,
        total=total,
        turn_scores=scores,
        session_scores=whole,
        session_labels=sorted(labels, key=lambda label: label.criterion),
        duration=duration_label,
        shown=shown,
    )


__all__ = ["router"]
