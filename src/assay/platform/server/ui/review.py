"""The reviewer's pages: review queues with their counts, and the item page (input, output and
contexts side by side, the judge's suggestion and reason, the queue's criteria as a form). A
session queue's items open on the session review page of `review_sessions.py`.

An item opened by a reviewer is locked to them for `LOCK_MINUTES` (table `review_locks`); the
next item skips the ones others hold, and a label sent for an item someone else holds is a 409.
Labels are appended through the same repositories as the API, authored `user:<username>`.
Keyboard shortcuts live in static/assay-ui.js (no inline script).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.traces import QueueIn
from assay.platform.server.storage import models
from assay.platform.server.storage.access import username_of
from assay.platform.server.storage.repos import CriteriaRepo
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.review_locks import LOCK_MINUTES, Locks
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.score_text import scales_of, shower
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

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
TEXT_LABEL_MAX = 1_000  # as a string label of the API
COMMENT_MAX = 20_000


def criterion_forms(session: Any, project_id: int, names: list[str]) -> list[dict[str, Any]]:
    """How each criterion of a queue is asked: `likert` (1–5, with the saved labels), `bool`
    (yes/no) or `text`. A name with no saved criterion is asked as free text."""
    repo = CriteriaRepo(session, project_id)
    forms = []
    for index, name in enumerate(names or ["note"]):
        saved = repo.by_name(name)
        kind = "text"
        if saved is not None and saved.output_type == "5-point":
            kind = "likert"
        elif saved is not None and (
            saved.output_type == "bool" or saved.criteria_type == "function"
        ):
            kind = "bool"
        forms.append(
            {
                "field": f"c{index}",
                "name": name,
                "kind": kind,
                "header": (saved.header or saved.description) if saved else "",
                "scale": [getattr(saved, f"likert_score_{i}") for i in range(1, 6)]
                if kind == "likert"
                else [],
                "yes": (saved.bool_true if saved else "") or "yes",
                "no": (saved.bool_false if saved else "") or "no",
            }
        )
    return forms


def parse_labels(forms: list[dict[str, Any]], form: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The label of each criterion from the submitted form, and what is missing or wrong."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for spec in forms:
        raw = field(form, spec["field"]).strip()
        if not raw:
            problems[spec["field"]] = f"choose a value for {spec['name']}"
        elif spec["kind"] == "likert":
            if raw not in {"1", "2", "3", "4", "5"}:
                problems[spec["field"]] = f"{spec['name']} is a score from 1 to 5"
            else:
                values[spec["name"]] = int(raw)
        elif spec["kind"] == "bool":
            if raw not in {"yes", "no"}:
                problems[spec["field"]] = f"{spec['name']} is yes or no"
            else:
                values[spec["name"]] = raw == "yes"
        elif len(raw) > TEXT_LABEL_MAX:
            problems[spec["field"]] = f"{spec['name']} has at most {TEXT_LABEL_MAX} characters"
        else:
            values[spec["name"]] = raw
    return values, problems


def hold_item(session: Any, access: Access, queue_id: int, key: str) -> dict[str, Any] | None:
    """Take (or renew) an item of a queue for the viewer as its page opens (`key`: a trace id,
    or a session item's lock key); who holds it instead, when someone else still does."""
    lock = Locks(session, access.project_id).acquire(queue_id, key, access.viewer.user_id)
    if lock.user_id == access.viewer.user_id:
        return None
    return {"name": username_of(session, lock.user_id) or "someone", "until": lock.expires_at}


def refuse_if_held(locks: Locks, queue_id: int, key: str, access: Access) -> None:
    """Labels for an item another reviewer holds are refused (409): they have it open."""
    holder = locks.holder(queue_id, key)
    if holder is not None and holder.user_id != access.viewer.user_id:
        raise UiError(
            409,
            "another reviewer holds this item for a few minutes; your labels were not "
            "stored — take the next item",
            "Item locked",
        )


def _queue(session: Any, access: Access, queue_id: int) -> models.ReviewQueue:
    try:
        return QueueRepo(session, access.project_id).get_by_id(queue_id)
    except ApiError:
        raise UiError(404, f"no review queue {queue_id} in this project") from None


# -- queues -------------------------------------------------------------------------------------
@router.get("/queues")
def queues(request: Request, project_id: int) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, project_id)
        rows, _next = repo.list(limit=500, cursor=None)
        listed = [(q, repo.counts(q)) for q in rows]
    return render(request, "queues.html", project=access.project, queues=listed)


@router.post("/queues")
async def create_queue(request: Request, project_id: int) -> Response:
    """A queue from a traces filter (the same validation as the API's POST /review-queues)."""
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    criteria = [c.strip() for c in str(form.get("criteria") or "").split(",") if c.strip()]
    try:
        body = QueueIn(
            name=str(form.get("name") or ""),
            condition=str(form.get("condition") or ""),
            criteria=list(dict.fromkeys(criteria)),
            scope=str(form.get("scope") or "trace"),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(p) for p in problem["loc"])
        raise UiError(422, f"{field}: {problem['msg']}", "The queue was not made") from None

    def create() -> int:
        with state_of(request).transaction() as session:
            return QueueRepo(session, project_id).create(body.model_dump()).id

    queue_id = await run_in_threadpool(create)
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}")


@router.get("/queues/{queue_id}")
def queue_page(
    request: Request, project_id: int, queue_id: int, after: str | None = None, shown: int = 0
) -> Response:
    """The queue's items a page of `QUEUE_PAGE` at a time, in the order they entered: the page
    says which of how many it shows, and links to the next."""
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, project_id)
        queue = _queue(session, access, queue_id)
        summaries: dict[str, Any] = {}
        try:
            if queue.scope == "session":
                sessions = repo.sessions()
                items, next_cursor = sessions.items(
                    queue, status=None, limit=QUEUE_PAGE, cursor=after
                )
                summaries = sessions.summaries([i.session_id for i in items])
            else:
                items, next_cursor = repo.items(queue, status=None, limit=QUEUE_PAGE, cursor=after)
        except ApiError:
            raise UiError(422, f"after: {after!r} is not a position in this queue") from None
        counts = repo.counts(queue)
    first = max(shown, 0) + 1
    return render(
        request,
        "queue.html",
        project=access.project,
        queue=queue,
        items=items,
        summaries=summaries,
        counts=counts,
        total=sum(counts.values()),
        first=first,
        last=first + len(items) - 1,
        next_cursor=next_cursor,
    )


QUEUE_PAGE = 200


@router.get("/queues/{queue_id}/next")
def next_item(request: Request, project_id: int, queue_id: int, after: int = 0) -> Response:
    """The next pending item (after item `after`, then from the start) that nobody else holds."""
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        queue = _queue(session, access, queue_id)
        locks = Locks(session, project_id)
        by_uncertainty = queue.order_by == "uncertainty"
        if queue.scope == "session":
            found = (
                QueueRepo(session, project_id)
                .sessions()
                .next_free_item(
                    queue.id, access.viewer.user_id, after, by_uncertainty=by_uncertainty
                )
            )
        else:
            found = locks.next_free_item(
                queue.id, access.viewer.user_id, after, by_uncertainty=by_uncertainty
            )
        if found is None:
            counts = QueueRepo(session, project_id).counts(queue)
            return render(
                request, "queue_empty.html", project=access.project, queue=queue, counts=counts
            )
        if queue.scope == "session":
            return see_other(f"{UI}/p/{project_id}/queues/{queue.id}/sessions/{found.id}")
        return see_other(f"{UI}/p/{project_id}/queues/{queue.id}/items/{found.trace_id}")


def _item_page(
    request: Request,
    access: Access,
    queue_id: int,
    trace_id: str,
    *,
    problems: dict[str, str] | None = None,
    given: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    with state_of(request).transaction() as session:
        queue = _queue(session, access, queue_id)
        repo = QueueRepo(session, access.project_id)
        item = repo.item(queue, trace_id) if queue.scope == "trace" else None
        if item is None:
            raise UiError(404, f"trace {trace_id} is not in review queue {queue.name!r}")
        traces = TraceRepo(session, access.project_id)
        trace = traces.get(trace_id)
        holder = hold_item(session, access, queue.id, trace_id)
        scores = traces.latest_scores([trace_id])[trace_id]
        labels = traces.latest_labels([trace_id])[trace_id]
        forms = criterion_forms(session, access.project_id, list(queue.criteria or []))
        scales = scales_of(session, access.project_id, scores)  # the judge's value in words
        counts = repo.counts(queue)
    return render(
        request,
        "review_item.html",
        status=status,
        project=access.project,
        queue=queue,
        item=item,
        trace=trace,
        scores=scores,
        shown=shower(scales),
        labels=labels,
        forms=forms,
        holder=holder,
        counts=counts,
        problems=problems or {},
        given=given or {},
        lock_minutes=LOCK_MINUTES,
    )


@router.get("/queues/{queue_id}/items/{trace_id}")
def item_page(request: Request, project_id: int, queue_id: int, trace_id: str) -> Response:
    return _item_page(request, member(request, project_id), queue_id, _trace_id(trace_id))


def _trace_id(raw: str) -> str:
    import uuid

    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise UiError(404, f"no trace {raw!r}") from None


@router.post("/queues/{queue_id}/items/{trace_id}")
async def submit_labels(
    request: Request, project_id: int, queue_id: int, trace_id: str
) -> Response:
    """Store the labels of every criterion, release the item and go to the next one."""
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)
    comment = field(form, "comment")[:COMMENT_MAX]

    def store() -> tuple[int | None, dict[str, str] | None, dict[str, str] | None]:
        with state_of(request).transaction() as session:
            queue = _queue(session, access, queue_id)
            repo = QueueRepo(session, project_id)
            item = repo.item(queue, ident)
            if item is None:
                raise UiError(404, f"trace {ident} is not in review queue {queue.name!r}")
            forms = criterion_forms(session, project_id, list(queue.criteria or []))
            values, problems = parse_labels(forms, form)
            if problems:
                return None, {k: str(form.get(k) or "") for k in form}, problems
            locks = Locks(session, project_id)
            refuse_if_held(locks, queue.id, ident, access)
            traces = TraceRepo(session, project_id)
            for criterion, value in values.items():
                traces.add_label(
                    ident,
                    criterion=criterion,
                    value=value,
                    author=access.viewer.author,
                    queue_id=queue.id,
                    comment=comment,
                )
            repo.after_label(queue, ident)
            locks.release(queue.id, ident, access.viewer.user_id)
            return item.id, None, None

    item_id, given, problems = await run_in_threadpool(store)
    if problems:
        return await run_in_threadpool(
            lambda: _item_page(
                request, access, queue_id, ident, problems=problems, given=given, status=422
            )
        )
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}/next?after={item_id}")


@router.post("/queues/{queue_id}/items/{trace_id}/skip")
async def skip_item(request: Request, project_id: int, queue_id: int, trace_id: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)

    def release() -> int:
        with state_of(request).transaction() as session:
            queue = _queue(session, access, queue_id)
            item = QueueRepo(session, project_id).item(queue, ident)
            if item is None:
                raise UiError(404, f"trace {ident} is not in review queue {queue.name!r}")
            Locks(session, project_id).release(queue.id, ident, access.viewer.user_id)
            return item.id

    item_id = await run_in_threadpool(release)
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}/next?after={item_id}")


@router.post("/queues/{queue_id}/items/{trace_id}/output")
async def edit_output(request: Request, project_id: int, queue_id: int, trace_id: str) -> Response:
    """Replace the trace's output with the reviewer's text; the state before is kept as a revision."""
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)
    text = field(form, "output")
    if len(text) > 100_000:
        raise UiError(422, "output: at most 100000 characters")
    try:
        version = int(str(form.get("version") or ""))
    except ValueError:
        raise UiError(422, "version: the form lost the trace's version; reload the page") from None

    def edit() -> None:
        with state_of(request).transaction() as session:
            _queue(session, access, queue_id)
            TraceRepo(session, project_id).edit(
                ident, version, {"output": text}, access.viewer.author
            )

    await run_in_threadpool(edit)
    return see_other(f"{UI}/p/{project_id}/queues/{queue_id}/items/{ident}")


__all__ = [
    "LOCK_MINUTES",
    "Locks",
    "criterion_forms",
    "hold_item",
    "parse_labels",
    "refuse_if_held",
    "router",
]
