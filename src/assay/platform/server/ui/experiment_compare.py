"""The compare page of an experiment: a chart per criterion on that criterion's own scale (bars
with 95% whiskers, a zero drawn, `compare_charts.py`), a table with the cohorts as columns and,
under each cohort's mean, its difference to a chosen baseline cohort with the paired interval
(`storage/experiment_compare.py`), then the examples, paged, each cohort's answer linked to its
trace and its score on one criterion with the difference to the baseline, optionally only the
examples where one cohort scored below the baseline.

Query: `baseline` (a cohort; the first by default), `criterion` (of the examples table; the first
by default), `worse` (a cohort: only examples where it is below the baseline), `page` (1-based).
A name that is not the experiment's falls back to the default; a page past the end shows the
last one."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import Response

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.experiment_compare import ExperimentComparison
from assay.platform.server.ui.compare_charts import criterion_chart
from assay.platform.server.ui.web import UiError, member, render, state_of

PAGE_SIZE = 25
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _page_number(text: str) -> int:
    return int(text) if text.isdigit() and 0 < len(text) < 9 else 1


def page_links(base: str, params: dict[str, str], page: int, pages: int) -> dict[str, str | None]:
    def at(number: int) -> str:
        return f"{base}?{urlencode({**params, 'page': str(number)})}"

    return {
        "first": at(1) if page > 1 else None,
        "previous": at(page - 1) if page > 1 else None,
        "next": at(page + 1) if page < pages else None,
        "last": at(pages) if page < pages else None,
    }


def compare_page(
    request: Request,
    project_id: int,
    experiment_id: int,
    baseline: str = "",
    criterion: str = "",
    worse: str = "",
    page: str = "1",
) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentComparison(session, project_id)
        try:
            experiment = repo.get(experiment_id)
        except ApiError:
            raise UiError(404, f"no experiment {experiment_id} in this project") from None
        grid = repo.grid(experiment)
        cohorts = [c.name for c in grid.cohorts]
        baseline = baseline if baseline in cohorts else (cohorts[0] if cohorts else "")
        worse = worse if worse in cohorts and worse != baseline else ""
        comparison = repo.criteria_comparison(experiment, grid, baseline)
        chosen = next((c for c in comparison if c.name == criterion), None) or (
            comparison[0] if comparison else None
        )
        criterion = chosen.name if chosen else ""
        number = _page_number(page)
        _rows, matched = repo.item_rows(
            grid, chosen.key if chosen else -1, baseline, worse=worse, limit=0
        )
        pages = max(1, -(-matched // PAGE_SIZE))
        number = min(number, pages)
        items, _ = repo.item_rows(
            grid,
            chosen.key if chosen else -1,
            baseline,
            worse=worse,
            offset=(number - 1) * PAGE_SIZE,
            limit=PAGE_SIZE,
        )
    here = f"/ui/p/{project_id}/experiments/{experiment_id}/compare"
    params = {"baseline": baseline, "criterion": criterion}
    if worse:
        params["worse"] = worse
    context: dict[str, Any] = {
        "experiment": experiment,
        "finished": experiment.status in TERMINAL,
        "cohorts": cohorts,
        "baseline": baseline,
        "criterion": criterion,
        "worse": worse,
        "comparison": comparison,
        "charts": [criterion_chart(i, c, cohorts) for i, c in enumerate(comparison)],
        "items": items,
        "matched": matched,
        "first_shown": (number - 1) * PAGE_SIZE + 1 if items else 0,
        "last_shown": (number - 1) * PAGE_SIZE + len(items),
        "page_links": page_links(here, params, number, pages),
    }
    return render(request, "compare.html", project=access.project, **context)


__all__ = ["PAGE_SIZE", "compare_page", "page_links"]
