"""The engineer's experiment pages: the list (with *New experiment*, `experiment_form.py`), an
experiment's page with its progress updated live (htmx polls the progress fragment every second
while the experiment runs; the fragment of a finished experiment has no trigger, so polling
stops), and the ways into its generations as traces: `…/traces` (optionally `?cohort=`) opens the
trace explorer on them, `…/generations/{id}` one generation's trace page. Both publish first what
an older experiment had not published yet (`storage/experiment_traces.py`), so every experiment's
generations open. The compare page is `experiment_compare.py`. A running experiment's page has a
Cancel button, a cancelled or failed one's a Resume button (POST, CSRF)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.experiment_traces import ExperimentTraces, condition_for
from assay.platform.server.storage.experiments import ExperimentRepo
from assay.platform.server.ui import experiment_compare, experiment_form
from assay.platform.server.ui.web import (
    UI,
    UiError,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
    templates,
)

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
# the form's literal path first, so /experiments/{experiment_id} never takes "new"
router.add_api_route("/experiments/new", experiment_form.new_experiment, methods=["GET"])
router.add_api_route("/experiments/new", experiment_form.submit_experiment, methods=["POST"])
router.add_api_route(
    "/experiments/{experiment_id}/compare", experiment_compare.compare_page, methods=["GET"]
)
TERMINAL = frozenset({"completed", "failed", "cancelled"})


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


@router.get("/experiments/{experiment_id}/traces")
def experiment_traces(
    request: Request, project_id: int, experiment_id: int, cohort: str = ""
) -> Response:
    """The trace explorer on the experiment's generations (one cohort's with `cohort`)."""
    member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        experiment = _experiment(repo, experiment_id)
        names = [c.name for c in repo.cohorts(experiment)]
        if cohort and cohort not in names:
            raise UiError(404, f"experiment {experiment.name!r} has no cohort {cohort!r}")
        ExperimentTraces(session, project_id).publish_all(experiment)
    query = urlencode({"condition": condition_for(experiment_id, cohort or None)})
    return see_other(f"{UI}/p/{project_id}/traces?{query}")


@router.get("/experiments/{experiment_id}/generations/{trace_id}")
def generation(request: Request, project_id: int, experiment_id: int, trace_id: int) -> Response:
    """One generation's trace page (published first if it was not yet)."""
    member(request, project_id)
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, project_id)
        experiment = _experiment(repo, experiment_id)
        publisher = ExperimentTraces(session, project_id)
        row = publisher.generation(experiment, trace_id)
        if row is None:
            raise UiError(404, f"experiment {experiment.name!r} has no generation {trace_id}")
        publisher.publish(experiment, [row])
        logged = publisher.trace_id_of(row)
    return see_other(f"{UI}/p/{project_id}/traces/{logged}")


@router.post("/experiments/{experiment_id}/{action}")
async def cancel_or_resume(
    request: Request, project_id: int, experiment_id: int, action: str
) -> Response:
    """The page's Cancel and Resume buttons: the API's cancel and resume, then the page again.

    A page shown a moment ago may offer Cancel for an experiment that has finished since (or
    Resume for one another tab resumed): that is a 409 naming its status, linked back to the
    experiment's page, which shows where it stands."""
    if action not in ("cancel", "resume"):
        raise UiError(404, f"no such action {action!r}")
    access = await run_in_threadpool(member, request, project_id)
    await require_csrf(request, access.viewer.csrf)
    page = f"{UI}/p/{project_id}/experiments/{experiment_id}"

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
                raise UiError(exc.status, exc.message, back=page) from None

    await run_in_threadpool(change)
    host = getattr(request.app.state, "host", request.app)  # the assay app the UI is mounted on
    worker = getattr(host.state, "worker", None)
    if action == "cancel" and worker is not None:  # as the API's cancel: stop its calls now
        worker.cancelled(experiment_id)
    return see_other(page)


__all__ = ["router"]
