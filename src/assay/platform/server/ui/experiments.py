"""The engineer's experiment pages: the list, an experiment's page with its progress updated live
(htmx polls the progress fragment every second while the experiment runs; the fragment of a
finished experiment has no trigger, so polling stops) and the comparison page: cohort × criterion
means with 95% intervals and coverage, a bar chart with the same numbers in a table beside it, and
the examples side by side, filterable to those where cohort A scored worse than cohort B. A running
experiment's page has a Cancel button, a cancelled or failed one's a Resume button (POST, CSRF)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.experiments import ExperimentRepo
from assay.platform.server.ui.web import (
    UiError,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
    templates,
)

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
TERMINAL = frozenset({"completed", "failed", "cancelled"})
MAX_COMPARED_ROWS = 5_000


def _experiment(repo: ExperimentRepo, experiment_id: int) -> Any:
    try:
        return repo.get(experiment_id)
    except ApiError:
        raise UiError(404, f"no experiment {experiment_id} in this project") from None


@router.get("/experiments")
def experiments(request: Request, project_id: int) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        rows, _next = repo.list(name=None, limit=500, cursor=None)
        listed = [(e, repo.progress(e), [c.name for c in repo.cohorts(e)]) for e in reversed(rows)]
    return render(request, "experiments.html", project=access.project, experiments=listed)


def _progress_context(repo: ExperimentRepo, experiment: Any) -> dict[str, Any]:
    progress = repo.progress(experiment)
    finished = experiment.status in TERMINAL
    return {
        "experiment": experiment,
        "progress": progress,
        "finished": finished,
        "summary": repo.summary(experiment)["summary"] if finished else [],
    }


@router.get("/experiments/{experiment_id}")
def experiment_page(request: Request, project_id: int, experiment_id: int) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        experiment = _experiment(repo, experiment_id)
        context = _progress_context(repo, experiment)
        cohorts = repo.cohorts(experiment)
    return render(request, "experiment.html", project=access.project, cohorts=cohorts, **context)


@router.get("/experiments/{experiment_id}/progress")
def progress_fragment(request: Request, project_id: int, experiment_id: int) -> HTMLResponse:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        context = _progress_context(repo, _experiment(repo, experiment_id))
    body = templates.get_template("fragments/progress.html").render(
        project=access.project, csrf=access.viewer.csrf, **context
    )
    return HTMLResponse(body)


@router.post("/experiments/{experiment_id}/{action}")
async def cancel_or_resume(
    request: Request, project_id: int, experiment_id: int, action: str
) -> Response:
    """The page's Cancel and Resume buttons: the API's cancel and resume, then the page again."""
    if action not in ("cancel", "resume"):
        raise UiError(404, f"no such action {action!r}")
    access = await run_in_threadpool(member, request, project_id)
    await require_csrf(request, access.viewer.csrf)

    def change() -> None:
        with state_of(request).transaction() as session:
            repo = ExperimentRepo(session, project_id)
            _experiment(repo, experiment_id)
            try:
                if action == "cancel":
                    repo.cancel(experiment_id)
                else:
                    repo.resume(experiment_id)
            except ApiError as exc:
                raise UiError(exc.status, exc.message) from None

    await run_in_threadpool(change)
    return see_other(f"/ui/p/{project_id}/experiments/{experiment_id}")


def compare_rows(
    rows: list[dict[str, Any]], a: str, b: str, criterion: str, worse_only: bool
) -> list[dict[str, Any]]:
    """Examples side by side: per example, cohort A's and cohort B's answer and score on
    `criterion`; with `worse_only`, only examples where both were scored and A < B."""
    by_example: dict[Any, dict[str, Any]] = {}
    for row in rows:
        slot = by_example.setdefault(
            row["example_id"],
            {"position": row["position"], "question": row["question"], "a": None, "b": None},
        )
        if row["cohort"] == a:
            slot["a"] = row
        if row["cohort"] == b:
            slot["b"] = row
    out = []
    for slot in sorted(by_example.values(), key=lambda s: s["position"] or 0):
        slot["a_value"] = _value(slot["a"], criterion)
        slot["b_value"] = _value(slot["b"], criterion)
        if worse_only and not (
            slot["a_value"] is not None
            and slot["b_value"] is not None
            and slot["a_value"] < slot["b_value"]
        ):
            continue
        out.append(slot)
    return out


def _value(row: dict[str, Any] | None, criterion: str) -> float | None:
    if row is None:
        return None
    cell = row["scores"].get(criterion) or {}
    return cell.get("value") if cell.get("status") == "ok" else None


@router.get("/experiments/{experiment_id}/compare")
def compare_page(
    request: Request,
    project_id: int,
    experiment_id: int,
    a: str = "",
    b: str = "",
    criterion: str = "",
    worse: str = "",
) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        experiment = _experiment(repo, experiment_id)
        summary = repo.summary(experiment)["summary"]
        cohorts = [c.name for c in repo.cohorts(experiment)]
        criteria = [c["name"] for c in experiment.criteria]
        rows: list[dict[str, Any]] = []
        cursor = None
        while len(rows) < MAX_COMPARED_ROWS:
            page, cursor = repo.rows(experiment, limit=500, cursor=cursor)
            rows += page
            if cursor is None:
                break
    a = a if a in cohorts else (cohorts[0] if cohorts else "")
    b = b if b in cohorts else (cohorts[1] if len(cohorts) > 1 else a)
    criterion = criterion if criterion in criteria else (criteria[0] if criteria else "")
    chart = {
        "labels": criteria,
        "datasets": [
            {
                "label": cohort,
                "data": [
                    next(
                        (
                            s["mean"]
                            for s in summary
                            if s["cohort"] == cohort and s["criterion"] == c
                        ),
                        None,
                    )
                    for c in criteria
                ],
            }
            for cohort in cohorts
        ],
    }
    return render(
        request,
        "compare.html",
        project=access.project,
        experiment=experiment,
        summary=summary,
        cohorts=cohorts,
        criteria=criteria,
        a=a,
        b=b,
        criterion=criterion,
        worse=bool(worse),
        pairs=compare_rows(rows, a, b, criterion, bool(worse)),
        chart=chart,
    )


__all__ = ["compare_rows", "router"]
