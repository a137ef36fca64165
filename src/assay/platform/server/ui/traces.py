"""The engineer's trace pages: the list with a condition bar (checked as you type by
`/traces/check`, with the review-queue grammar of `conditions/`; the matches counted only when
asked, by `/traces/count`), a form that makes a review queue
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
# A filtered page looks at no more than this many traces (newest first, below its cursor); a
# condition few traces match then costs a bounded scan per page, not the whole table.
SCAN = 10_000
# "Count" stops here: past it the page says "more than 10,000", so counting a condition that
# matches many traces reads at most this many rows.
COUNT_MOST = 10_000


def check_condition(text: str) -> tuple[Any, str]:
    """(WHERE expression, problem) of a condition typed in the bar. No count: counting is a
    scan, done only when asked (`count`)."""
    if len(text) > CONDITION_MAX:
        return None, f"condition: at most {CONDITION_MAX} characters"
    try:
        return compile_condition(text), ""
    except ApiError as exc:
        return None, exc.message


@router.get("/traces")
def traces(request: Request, project_id: int, condition: str = "", cursor: str = "") -> Response:
    """The newest traces, those matching the condition if one is given: summaries (the short
    columns and the start of input and output), never a count (see `count`)."""
    access = member(request, project_id)
    where, problem = check_condition(condition)
    rows: list[Any] = []
    next_cursor = None
    labels: dict[str, Any] = {}
    scores: dict[str, Any] = {}
    if not problem:
        with state_of(request).transaction() as session:
            repo = TraceRepo(session, project_id)
            rows, next_cursor = repo.summaries(
                limit=PAGE, cursor=cursor or None, where=where, scan=SCAN
            )
            labels = repo.latest_labels([r.id for r in rows])
            scores = repo.latest_scores([r.id for r in rows])
    return render(
        request,
        "traces.html",
        project=access.project,
        condition=condition,
        problem=problem,
        rows=rows,
        labels=labels,
        scores=scores,
        next_cursor=next_cursor,
        partial=next_cursor is not None and len(rows) < PAGE,
    )


@router.get("/traces/check")
def check(request: Request, project_id: int, condition: str = "") -> HTMLResponse:
    """The condition bar's verdict as a fragment (always 200, so htmx swaps it in); it clears a
    count made for the condition before."""
    member(request, project_id)
    _where, problem = check_condition(condition)
    body = templates.get_template("fragments/condition_check.html").render(
        problem=problem, condition=condition, clear_count=True
    )
    return HTMLResponse(body)


@router.get("/traces/count")
def count(request: Request, project_id: int, condition: str = "") -> HTMLResponse:
    """How many traces match, when asked (the Count button): exact up to `COUNT_MOST`, else
    "more than" it."""
    member(request, project_id)
    where, problem = check_condition(condition)
    matching = None
    if not problem:
        with state_of(request).transaction() as session:
            matching = TraceRepo(session, project_id).count(where, most=COUNT_MOST)
    body = templates.get_template("fragments/match_count.html").render(
        problem=problem, matching=matching, most=COUNT_MOST, condition=condition
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


__all__ = ["COUNT_MOST", "PAGE", "SCAN", "check_condition", "router", "span_tree"]
