"""The engineer's trace pages: the list with a condition bar (checked as you type by
`/traces/check`, with the review-queue grammar of `conditions/`), a form that makes a review queue
from the filter, and a trace's detail: its span tree, raw request and response, every score and
label with who gave it, and its revisions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.traces import CONDITION_MAX
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.review import _trace_id
from assay.platform.server.ui.web import member, render, state_of, templates

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
PAGE = 50


def check_condition(session: Any, project_id: int, text: str) -> tuple[Any, str, int | None]:
    """(WHERE expression, problem, number of matching traces) of a condition typed in the bar."""
    if len(text) > CONDITION_MAX:
        return None, f"condition: at most {CONDITION_MAX} characters", None
    try:
        where = compile_condition(text)
    except ApiError as exc:
        return None, exc.message, None
    return where, "", TraceRepo(session, project_id).count(where)


@router.get("/traces")
def traces(request: Request, project_id: int, condition: str = "", cursor: str = "") -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        where, problem, matching = check_condition(session, project_id, condition)
        rows: list[Any] = []
        next_cursor = None
        if not problem:
            repo = TraceRepo(session, project_id)
            rows, next_cursor = repo.list(limit=PAGE, cursor=cursor or None, where=where)
            labels = repo.latest_labels([r.id for r in rows])
            scores = repo.latest_scores([r.id for r in rows])
        else:
            labels, scores = {}, {}
    return render(
        request,
        "traces.html",
        project=access.project,
        condition=condition,
        problem=problem,
        matching=matching,
        rows=rows,
        labels=labels,
        scores=scores,
        next_cursor=next_cursor,
    )


@router.get("/traces/check")
def check(request: Request, project_id: int, condition: str = "") -> HTMLResponse:
    """The condition bar's verdict as a fragment (always 200, so htmx swaps it in)."""
    member(request, project_id)
    with state_of(request).transaction() as session:
        _where, problem, matching = check_condition(session, project_id, condition)
    body = templates.get_template("fragments/condition_check.html").render(
        problem=problem, matching=matching, condition=condition
    )
    return HTMLResponse(body)


def span_tree(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spans as a forest: each node `{span, children, ms}`; a span whose parent is missing
    is a root, and spans keep their order of start."""
    spans = [s for s in spans or [] if isinstance(s, dict)]
    ids = {s.get("id") for s in spans}
    children: dict[Any, list[dict[str, Any]]] = {}
    roots = []
    for span in sorted(spans, key=lambda s: str(s.get("started_at") or "")):
        node = {"span": span, "children": children.setdefault(span.get("id"), []), "ms": _ms(span)}
        parent = span.get("parent_id")
        if parent and parent in ids and parent != span.get("id"):
            children.setdefault(parent, []).append(node)
        else:
            roots.append(node)
    return roots


def _ms(span: dict[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(str(span["started_at"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(span["ended_at"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None
    return round((end - start).total_seconds() * 1000, 1)


@router.get("/traces/{trace_id}")
def trace_page(request: Request, project_id: int, trace_id: str) -> Response:
    access = member(request, project_id)
    ident = _trace_id(trace_id)
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, project_id)
        trace = repo.get(ident)
        scores = repo.score_history(ident)
        labels = repo.label_history(ident)
        revisions = repo.revisions(ident)
        queues = QueueRepo(session, project_id).names_by_id()
    return render(
        request,
        "trace.html",
        project=access.project,
        trace=trace,
        tree=span_tree(trace.spans),
        scores=scores,
        labels=labels,
        revisions=revisions,
        queues=queues,
    )


__all__ = ["check_condition", "router", "span_tree"]
