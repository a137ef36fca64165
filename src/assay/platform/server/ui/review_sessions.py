"""The reviewer's page of a session queue's item: the whole session as a conversation (the
session page's rendering, `fragments/conversation.html`), the judge's scores of the session by
this queue, and the queue's criteria as the form of `review.py`.

Items are addressed by their id (a session id may be 200 characters of anything). The page shows
the session as it is when opened; the form carries the content shown (trace count and content
key), which each label records, so a label sent after the session grew says what was judged. The
item is held for the reviewer as a trace item is (`review_locks`, key `session-item:<id>`).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.review_locks import LOCK_MINUTES, Locks
from assay.platform.server.storage.review_sessions import SessionQueue, lock_key
from assay.platform.server.storage.session_labels import SessionLabels
from assay.platform.server.storage.sessions import SessionRepo
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.conversation import conversation
from assay.platform.server.ui.review import (
    COMMENT_MAX,
    _queue,
    criterion_forms,
    hold_item,
    parse_labels,
    refuse_if_held,
)
from assay.platform.server.ui.score_text import scales_of, shower
from assay.platform.server.ui.waterfall import duration_label
from assay.platform.server.ui.web import (
    UI,
    Access,
    UiError,
    field,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
)

router = APIRouter(prefix="/p/{project_id}")
CONTENT = re.compile(r"^\d{1,9}:\d{1,18}$")


def _item(session: Any, access: Access, queue_id: int, item_id: int) -> tuple[Any, Any]:
    queue = _queue(session, access, queue_id)
    if queue.scope != "session":
        raise UiError(404, f"review queue {queue.name!r} holds traces, not sessions")
    try:
        return queue, SessionQueue(session, access.project_id).item_by_id(queue, item_id)
    except ApiError as exc:
        raise UiError(404, exc.message) from None


def _page(
    request: Request,
    access: Access,
    queue_id: int,
    item_id: int,
    *,
    problems: dict[str, str] | None = None,
    given: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    project_id = access.project_id
    with state_of(request).transaction() as session:
        queue, item = _item(session, access, queue_id, item_id)
        repo = SessionQueue(session, project_id)
        try:
            traces = SessionRepo(session, project_id).traces(item.session_id)
        except ApiError:
            traces = []  # its traces were deleted: the item stays, with nothing to read
        total = SessionRepo(session, project_id).size(item.session_id) if traces else 0
        content = repo.summaries([item.session_id]).get(item.session_id)
        holder = hold_item(session, access, queue.id, lock_key(item.id))
        judged = repo.latest_judged(queue.id, [item.session_id])[item.session_id]
        scores = {
            name: SimpleNamespace(label=None, **_score_fields(row)) for name, row in judged.items()
        }
        labels = SessionLabels(session, project_id).latest(item.session_id)
        turn_scores = TraceRepo(session, project_id).latest_scores([t.id for t in traces])
        names = set(scores) | {c for per in turn_scores.values() for c in per}
        forms = criterion_forms(session, project_id, list(queue.criteria or []))
        shown = shower(scales_of(session, project_id, names))
        counts = repo.counts(queue)
        turns = conversation(traces)
    return render(
        request,
        "review_session.html",
        status=status,
        project=access.project,
        queue=queue,
        item=item,
        session_id=item.session_id,
        content=content,
        turns=turns,
        total=total,
        scores=scores,
        turn_scores=turn_scores,
        labels=labels,
        shown=shown,
        duration=duration_label,
        forms=forms,
        holder=holder,
        counts=counts,
        problems=problems or {},
        given=given or {},
        lock_minutes=LOCK_MINUTES,
    )


def _score_fields(row: Any) -> dict[str, Any]:
    return {
        "criterion": row.criterion,
        "value": row.value,
        "outcome": row.outcome or {},
        "source": row.source,
        "traces": row.traces,
    }


@router.get("/queues/{queue_id}/sessions/{item_id}")
def session_item_page(request: Request, project_id: int, queue_id: int, item_id: int) -> Response:
    return _page(request, member(request, project_id), queue_id, item_id)


@router.post("/queues/{queue_id}/sessions/{item_id}")
async def submit_session_labels(
    request: Request, project_id: int, queue_id: int, item_id: int
) -> Response:
    """Store the labels of every criterion on the content shown, release the item, go to the
    next one."""
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    comment = field(form, "comment")[:COMMENT_MAX]
    shown = field(form, "content_key")
    if not CONTENT.match(shown):
        raise UiError(422, "content_key: the form lost the session's content; reload the page")
    traces = int(shown.split(":")[0])

    def store() -> tuple[dict[str, str] | None, dict[str, str] | None]:
        with state_of(request).transaction() as session:
            queue, item = _item(session, access, queue_id, item_id)
            forms = criterion_forms(session, project_id, list(queue.criteria or []))
            values, problems = parse_labels(forms, form)
            if problems:
                return {k: str(form.get(k) or "") for k in form}, problems
            locks = Locks(session, project_id)
            refuse_if_held(locks, queue.id, lock_key(item.id), access)
            labels = SessionLabels(session, project_id)
            for criterion, value in values.items():
                labels.add(
                    item.session_id,
                    criterion=criterion,
                    value=value,
                    author=access.viewer.author,
                    traces=traces,
                    content_key=shown,
                    queue_id=queue.id,
                    comment=comment,
                )
            SessionQueue(session, project_id).after_label(queue, item.session_id)
            locks.release(queue.id, lock_key(item.id), access.viewer.user_id)
            return None, None

    given, problems = await run_in_threadpool(store)
    if problems:
        return await run_in_threadpool(
            lambda: _page(
                request, access, queue_id, item_id, problems=problems, given=given, status=422
            )
        )
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}/next?after={item_id}")


@router.post("/queues/{queue_id}/sessions/{item_id}/skip")
async def skip_session_item(
    request: Request, project_id: int, queue_id: int, item_id: int
) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    await require_csrf(request, access.viewer.csrf)

    def release() -> None:
        with state_of(request).transaction() as session:
            queue, item = _item(session, access, queue_id, item_id)
            Locks(session, project_id).release(queue.id, lock_key(item.id), access.viewer.user_id)

    await run_in_threadpool(release)
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}/next?after={item_id}")


def review_url(project_id: int, queue_id: int, item_id: int) -> str:
    return f"{UI}/p/{project_id}/queues/{queue_id}/sessions/{item_id}"


__all__ = ["review_url", "router"]
