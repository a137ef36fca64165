"""A criterion's page (`/ui/p/{project}/criterion?name=...`): how far to trust its scores over
a range (the last 30 days by default): the reliability card of the judge that gave them (or "no
card for this judge" and why), the judge's mean, the labels' mean and the mean corrected by the
labels with its interval and the labels that would halve it, and the alert when the judge agrees
with people on recent labels less than its card promises. The figures are those of `GET
/api/v1/dashboard`'s `trust` field (`storage/trust_figures.py`) for this one criterion; any
criterion name with scores or labels has a page, saved in the project or not (a saved one links
to its definition). A bad range or name is shown beside its field."""

from __future__ import annotations

from datetime import datetime, timezone

from fastapi import APIRouter, Request
from fastapi.responses import Response

from assay.platform.server.errors import ApiError, invalid
from assay.platform.server.storage.dashboard import traffic
from assay.platform.server.storage.dashboard_window import RANGES, window_of
from assay.platform.server.storage.trust_figures import trust
from assay.platform.server.ui.web import member, render, state_of

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
NAME_MAX = 200  # as trace_scores.criterion and trace_labels.criterion


@router.get("/criterion")
def criterion_page(
    request: Request, project_id: int, name: str = "", range: str = "30d"
) -> Response:
    access = member(request, project_id)
    problem, field, found = "", "", None
    try:
        if not name.strip():
            raise invalid("name", "name the criterion (e.g. ?name=faithfulness)")
        if len(name) > NAME_MAX:
            raise invalid("name", f"a criterion's name is at most {NAME_MAX} characters")
        window = window_of(range, None, None, datetime.now(timezone.utc))
        with state_of(request).transaction() as session:
            # production traffic, as the dashboard reads it by default (no experiment generations)
            found = trust(session, project_id, window, traffic(), criterion=name)[name]
    except ApiError as exc:
        problem, field = exc.message, exc.field or ""
    return render(
        request,
        "criterion.html",
        status=422 if problem else 200,
        project=access.project,
        criterion=name,
        choices=RANGES,
        chosen=range if range in RANGES else "30d",
        problem=problem,
        problem_field=field,
        found=found,
    )


__all__ = ["router"]
