"""Routes that change a running experiment: cancel and resume (write scope).

`POST /api/v1/experiments/{id}/cancel` answers the experiment's progress with status `cancelled`;
409 when it has already finished (completed, failed or cancelled). `POST …/resume` queues a
cancelled or failed experiment again and answers its progress (status `queued`); 409 otherwise.
Another project's id is a 404, as everywhere.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.platform.server.api.deps import Id, Writer, state_of
from assay.platform.server.storage.experiments import ExperimentRepo

router = APIRouter(prefix="/api/v1")


@router.post("/experiments/{experiment_id}/cancel")
def cancel_experiment(experiment_id: Id, request: Request, principal: Writer) -> dict[str, Any]:
    """Stop generating and judging; keep what is stored (the results are partial)."""
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        progress = repo.progress(repo.cancel(experiment_id))
    worker = getattr(request.app.state, "worker", None)
    if worker is not None:  # this server's own worker stops now, not at its next heartbeat
        worker.cancelled(experiment_id)
    return progress


@router.post("/experiments/{experiment_id}/resume", status_code=202)
def resume_experiment(experiment_id: Id, request: Request, principal: Writer) -> dict[str, Any]:
    """Queue a cancelled or failed experiment again; stored generations and scores are kept."""
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        return repo.progress(repo.resume(experiment_id))


__all__ = ["router"]
