"""`GET /api/v1/dashboard`: the figures of the project's dashboard as JSON, for a team's own
tools: over `range` (1h, 1d, 7d, 30d; 7d by default) or `since`/`until` (ISO 8601), and a
review-queue `condition`, the traces, errors, latency p50/p95/p99, tokens, cost, the same by
model, each criterion's mean with its interval and n, labels, each online evaluator's coverage,
and every hour or day bucket (`storage/dashboard_figures.py`), and under `trust` how far to trust
each criterion's scores: its judge's card, the mean corrected by people's labels and the
agreement alert (`storage/trust_figures.py`). An experiment's generations, published as traces
of the project, are not production traffic and are left out unless `include_experiments=true`
(then every figure is read from the traces). A bad parameter is a 422 naming it; a key needs
`read`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from assay.platform.server.api.deps import Reader, state_of
from assay.platform.server.schemas.traces import CONDITION_MAX
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_figures import figures
from assay.platform.server.storage.dashboard_matched import narrowed
from assay.platform.server.storage.dashboard_window import window_of
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trust_figures import trust

router = APIRouter(prefix="/api/v1")

Moment = Annotated[str | None, Query(max_length=40)]


@router.get("/dashboard")
def dashboard(
    request: Request,
    principal: Reader,
    range: Annotated[str | None, Query(max_length=10)] = None,
    since: Moment = None,
    until: Moment = None,
    condition: Annotated[str | None, Query(max_length=CONDITION_MAX)] = None,
    include_experiments: bool = False,
) -> dict[str, Any]:
    window = window_of(range, since, until, datetime.now(timezone.utc))
    where = compile_condition(condition)
    with state_of(request).transaction() as session:
        repo = DashboardRepo(
            session, principal.project_id, window, where, include_experiments=include_experiments
        )
        with narrowed(repo):  # the condition matched once, for the figures and the trust panel
            found = figures(repo, condition)
            found["trust"] = trust(session, principal.project_id, window, repo.traces_where())
        return found


__all__ = ["router"]
