"""The engineer's trace pages: the traces table (latency, tokens, cost, status, model, session,
scores and labels; sorted by arrival, latency or tokens; a time range and quick filters for
model, status and a score below x beside the condition bar, checked as you type by
`/traces/check` with the review-queue grammar of `conditions/`; paged first / newer / older with
a bounded count), a form that makes a review queue from the filter, and a trace's page: its
spans as a waterfall (`waterfall.py`), raw request and response, every score and label with who
gave it, its revisions and the actions of `trace_actions.py`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.traces import CONDITION_MAX
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trace_pages import SORTS, TraceExplorer, TracePage
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.review import _trace_id
from assay.platform.server.ui.score_text import scales_of, shower
from assay.platform.server.ui.trace_query import RANGE_NAMES, ExplorerQuery
from assay.platform.server.ui.waterfall import duration_label, waterfall
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


def _links(query: ExplorerQuery, found: TracePage, base: str, shown: int) -> dict[str, Any]:
    """First / newer / older links of the page (None where there is no such page), and the
    position of its first trace."""
    if query.keyset:  # by arrival number: the position travels in the links
        at = 0 if query.after and found.newer is None else query.at  # back at the newest
        newer = found.newer and query.url(base, after=found.newer, at=max(0, at - PAGE))
        older = found.older and query.url(base, cursor=found.older, at=at + shown)
    else:  # by offset, which is the position
        at = query.offset
        newer = found.newer and query.url(base, offset=int(found.newer))
        older = found.older and query.url(base, offset=int(found.older))
    at_first = not (query.cursor or query.after or query.offset)
    first = None if at_first else query.url(base)
    return {"first": first, "newer": newer or None, "older": older or None, "at": at}


@router.get("/traces")
def traces(request: Request, project_id: int) -> Response:
    """The traces table: summaries (the short columns and the start of input and output) of the
    traces matching the condition and quick filters, in the chosen order. The total is counted
    (up to `COUNT_MOST`) when no condition is typed; a condition's matches are counted only when
    asked (see `count`)."""
    access = member(request, project_id)
    query = ExplorerQuery.read(request.query_params)
    where, problem = check_condition(query.condition)
    base = f"/ui/p/{project_id}/traces"
    found, total, links, models_seen = TracePage(), None, {}, []
    scales: dict[str, dict[float, str]] = {}
    labels: dict[str, Any] = {}
    scores: dict[str, Any] = {}
    filters = query.trace_filter(where)
    if not problem and not query.problems:
        with state_of(request).transaction() as session:
            repo = TraceExplorer(session, project_id)
            try:
                found = repo.page(
                    filters,
                    limit=PAGE,
                    sort=query.sort,
                    descending=query.order == "desc",
                    before=query.cursor or None,
                    after=query.after or None,
                    offset=query.offset,
                    scan=SCAN if where is not None else None,
                )
            except ApiError as exc:
                query.problems.append(exc.message)
            else:
                ids = [r.id for r in found.rows]
                labels, scores = repo.latest_labels(ids), repo.latest_scores(ids)
                named = {c for per_trace in scores.values() for c in per_trace}
                scales = scales_of(session, project_id, named)
                if not query.condition.strip():
                    total = repo.count(_counted(filters, query.sort), most=COUNT_MOST)
                models_seen = repo.recent_models()
        links = _links(query, found, base, len(found.rows))
    return render(
        request,
        "traces.html",
        project=access.project,
        q=query,
        here=base,  # not `base`: base.html sets that name for the navigation
        condition=query.condition,
        problem=problem,
        problems=query.problems,
        rows=found.rows,
        labels=labels,
        scores=scores,
        links=links,
        total=total,
        most=COUNT_MOST,
        page_size=PAGE,
        partial=found.partial,
        range_names=RANGE_NAMES,
        models_seen=models_seen,
        duration=duration_label,
        shown=shower(scales),
    )


def _counted(filters: Any, sort: str) -> Any:
    """The WHERE of what the table can show: sorted by a measure, traces without it are out."""
    where = filters.where()
    column = SORTS[sort]
    if sort == "created":
        return where
    return column.is_not(None) if where is None else where & column.is_not(None)


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


@router.get("/traces/{trace_id}")
def trace_page(request: Request, project_id: int, trace_id: str, done: str = "") -> Response:
    access = member(request, project_id)
    ident = _trace_id(trace_id)
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, project_id)
        trace = repo.get(ident)
        scores = repo.score_history(ident)
        labels = repo.label_history(ident)
        revisions = repo.revisions(ident)
        queue_repo = QueueRepo(session, project_id)
        queues = queue_repo.names_by_id()
        scales = scales_of(session, project_id, {s.criterion for s in scores})
    return render(
        request,
        "trace.html",
        project=access.project,
        trace=trace,
        spans=waterfall(trace.spans),
        duration=duration_label,
        scores=scores,
        labels=labels,
        revisions=revisions,
        queues=queues,
        done=done[:200],
        shown=shower(scales),
    )


__all__ = ["COUNT_MOST", "PAGE", "SCAN", "check_condition", "router"]
