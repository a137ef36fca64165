"""Routes under /api/v1: health, whoami, datasets (versioned) and their examples, tasks, criteria.

Every list takes `limit` (1–500, default 100) and `cursor` (the `next_cursor` of the page before)
and answers `{"items": [...], "next_cursor": str | null}`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from assay._version import __version__
from assay.platform import criteria_rules
from assay.platform.server.api.deps import (
    Cursor,
    Id,
    Limit,
    NameFilter,
    Reader,
    Version,
    Writer,
    clean_name,
    page,
    state_of,
)
from assay.platform.server.auth.keys import Principal
from assay.platform.server.errors import ApiError, invalid
from assay.platform.server.schemas.bodies import (
    CriteriaIn,
    DatasetImportIn,
    DatasetIn,
    ExperimentIn,
    TaskIn,
)
from assay.platform.server.schemas.dataset_files import ImportRefused, parse_examples
from assay.platform.server.storage import models
from assay.platform.server.storage.experiments import ExperimentRepo, experiment_json
from assay.platform.server.storage.repos import CriteriaRepo, DatasetRepo, TaskRepo, iso

router = APIRouter(prefix="/api/v1")


# -- serialisation -------------------------------------------------------------------------------
def dataset_json(dataset: models.Dataset, version: models.DatasetVersion) -> dict[str, Any]:
    return {
        "object_type": "dataset",
        "id": dataset.id,
        "name": dataset.name,
        "source_type": dataset.source_type,
        "source_file": dataset.source_file,
        "version": version.version,
        "latest_version": dataset.latest_version,
        "questions_qty": version.questions_qty,
        "example_count": version.example_count,
        "created_at": iso(dataset.created_at),
        "updated_at": iso(dataset.updated_at),
    }


def version_json(version: models.DatasetVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "questions_qty": version.questions_qty,
        "example_count": version.example_count,
        "content_hash": version.content_hash,
        "created_at": iso(version.created_at),
    }


def example_json(example: models.Example) -> dict[str, Any]:
    return {
        "id": example.id,
        "position": example.position,
        "question": example.question,
        "ground_truth_context": example.ground_truth_context,
        "ground_truth_answer": example.ground_truth_answer,
    }


def task_json(task: models.Task) -> dict[str, Any]:
    return {
        "object_type": "task",
        "id": task.id,
        "name": task.name,
        "generator_model": task.generator_model,
        "system_prompt": task.system_prompt,
        "created_at": iso(task.created_at),
        "updated_at": iso(task.updated_at),
    }


def criteria_json(row: models.Criteria) -> dict[str, Any]:
    data: dict[str, Any] = {"object_type": "criteria", "id": row.id}
    data.update({field: getattr(row, field) for field in criteria_rules.FIELDS})
    data.update(created_at=iso(row.created_at), updated_at=iso(row.updated_at))
    return data


# -- health and identity ---------------------------------------------------------------------------
@router.get("/health")
def health() -> dict[str, Any]:
    return {"status": "ok", "version": __version__}


def _any_scope(request: Request) -> Principal:
    principal = request.scope.get("assay.principal")
    if principal is None:
        raise ApiError(401, "unauthorized", "missing API key")
    return principal


@router.get("/auth/whoami")
def whoami(principal: Annotated[Principal, Depends(_any_scope)]) -> dict[str, Any]:
    """Any valid key, whatever its scopes: its project, id, scopes and expiry."""
    return {
        "project": {"id": principal.project_id, "name": principal.project_name},
        "key_id": principal.key_id,
        "scopes": sorted(principal.scopes),
        "expires_at": iso(principal.expires_at),
    }


# -- datasets ----------------------------------------------------------------------------------------
def _dataset_values(body: DatasetIn) -> dict[str, Any]:
    return body.model_dump()


@router.post("/datasets", status_code=201)
def create_dataset(body: DatasetIn, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        dataset, version = DatasetRepo(session, principal.project_id).create(_dataset_values(body))
        return dataset_json(dataset, version)


@router.post("/datasets/import", status_code=201)
def import_dataset(body: DatasetImportIn, request: Request, principal: Writer) -> dict[str, Any]:
    """A dataset from a file's text, checked as the web UI's import checks it: a new dataset, or
    a new version of the one with that name. A bad row is a 422 naming it; nothing is saved."""
    try:
        examples = parse_examples(body.content, body.source_type)
    except ImportRefused as exc:
        raise invalid("content", str(exc)) from None
    values = {
        "name": body.name,
        "source_type": body.source_type,
        "source_file": body.source_file,
        "questions_qty": len(examples),
        "examples": examples,
    }
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        existing = repo.by_name(body.name)
        if existing is None:
            dataset, version = repo.create(values)
            return {**dataset_json(dataset, version), "new_version": True}
        dataset, version, changed = repo.replace(existing.id, values)
        return {**dataset_json(dataset, version), "new_version": changed}


@router.get("/datasets")
def list_datasets(
    request: Request,
    principal: Reader,
    name: NameFilter = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        rows, next_cursor = repo.list(name=clean_name(name), limit=limit, cursor=cursor)
        return page([dataset_json(d, repo.version(d)) for d in rows], next_cursor)


@router.get("/datasets/{dataset_id}")
def get_dataset(
    dataset_id: Id, request: Request, principal: Reader, version: Version = None
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        dataset = repo.get(dataset_id)
        return dataset_json(dataset, repo.version(dataset, version))


@router.put("/datasets/{dataset_id}")
def replace_dataset(
    dataset_id: Id, body: DatasetIn, request: Request, principal: Writer
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        dataset, version, changed = DatasetRepo(session, principal.project_id).replace(
            dataset_id, _dataset_values(body)
        )
        return {**dataset_json(dataset, version), "new_version": changed}


@router.delete("/datasets/{dataset_id}", status_code=204)
def delete_dataset(dataset_id: Id, request: Request, principal: Writer) -> Response:
    with state_of(request).transaction() as session:
        DatasetRepo(session, principal.project_id).delete(dataset_id)
    return Response(status_code=204)


@router.get("/datasets/{dataset_id}/versions")
def list_versions(
    dataset_id: Id, request: Request, principal: Reader, limit: Limit = 100, cursor: Cursor = None
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        rows, next_cursor = repo.versions(repo.get(dataset_id), limit=limit, cursor=cursor)
        return page([version_json(v) for v in rows], next_cursor)


@router.get("/datasets/{dataset_id}/examples")
def list_examples(
    dataset_id: Id,
    request: Request,
    principal: Reader,
    version: Version = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        rows, next_cursor = repo.examples(
            repo.version(repo.get(dataset_id), version), limit=limit, cursor=cursor
        )
        return page([example_json(e) for e in rows], next_cursor)


@router.get("/datasets/{dataset_id}/examples/{example_id}")
def get_example(
    dataset_id: Id, example_id: Id, request: Request, principal: Reader
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, principal.project_id)
        return example_json(repo.example(repo.get(dataset_id), example_id))


# -- tasks -----------------------------------------------------------------------------------------
@router.post("/tasks", status_code=201)
def create_task(body: TaskIn, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return task_json(TaskRepo(session, principal.project_id).create(body.model_dump()))


@router.get("/tasks")
def list_tasks(
    request: Request,
    principal: Reader,
    name: NameFilter = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        rows, next_cursor = TaskRepo(session, principal.project_id).list(
            name=clean_name(name), limit=limit, cursor=cursor
        )
        return page([task_json(t) for t in rows], next_cursor)


@router.get("/tasks/{task_id}")
def get_task(task_id: Id, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return task_json(TaskRepo(session, principal.project_id).get(task_id))


@router.put("/tasks/{task_id}")
def replace_task(task_id: Id, body: TaskIn, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return task_json(
            TaskRepo(session, principal.project_id).replace(task_id, body.model_dump())
        )


@router.delete("/tasks/{task_id}", status_code=204)
def delete_task(task_id: Id, request: Request, principal: Writer) -> Response:
    with state_of(request).transaction() as session:
        TaskRepo(session, principal.project_id).delete(task_id)
    return Response(status_code=204)


# -- criteria --------------------------------------------------------------------------------------
def _criteria_values(body: CriteriaIn) -> dict[str, Any]:
    try:
        return criteria_rules.check(body.model_dump(), require_re2=True)
    except criteria_rules.CriteriaProblem as exc:
        raise invalid(exc.field, exc.detail) from None


@router.post("/criteria", status_code=201)
def create_criteria(body: CriteriaIn, request: Request, principal: Writer) -> dict[str, Any]:
    values = _criteria_values(body)
    with state_of(request).transaction() as session:
        return criteria_json(CriteriaRepo(session, principal.project_id).create(values))


@router.get("/criteria")
def list_criteria(
    request: Request,
    principal: Reader,
    name: NameFilter = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        rows, next_cursor = CriteriaRepo(session, principal.project_id).list(
            name=clean_name(name), limit=limit, cursor=cursor
        )
        return page([criteria_json(c) for c in rows], next_cursor)


@router.get("/criteria/{criteria_id}")
def get_criteria(criteria_id: Id, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return criteria_json(CriteriaRepo(session, principal.project_id).get(criteria_id))


@router.put("/criteria/{criteria_id}")
def replace_criteria(
    criteria_id: Id, body: CriteriaIn, request: Request, principal: Writer
) -> dict[str, Any]:
    values = _criteria_values(body)
    with state_of(request).transaction() as session:
        return criteria_json(
            CriteriaRepo(session, principal.project_id).replace(criteria_id, values)
        )


@router.delete("/criteria/{criteria_id}", status_code=204)
def delete_criteria(criteria_id: Id, request: Request, principal: Writer) -> Response:
    with state_of(request).transaction() as session:
        CriteriaRepo(session, principal.project_id).delete(criteria_id)
    return Response(status_code=204)


# -- experiments -------------------------------------------------------------------------------------
@router.post("/experiments", status_code=202)
def submit_experiment(body: ExperimentIn, request: Request, principal: Writer) -> dict[str, Any]:
    """Queue an experiment; a worker runs it. Poll `/experiments/{id}/progress`."""
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        # the body's checks, then its models' (a refusal rolls the submission back whole)
        experiment = repo.submit_checked(body.model_dump())
        return experiment_json(experiment, repo.cohorts(experiment))


@router.get("/experiments")
def list_experiments(
    request: Request,
    principal: Reader,
    name: NameFilter = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        rows, next_cursor = repo.list(name=clean_name(name), limit=limit, cursor=cursor)
        return page([experiment_json(e, repo.cohorts(e)) for e in rows], next_cursor)


@router.get("/experiments/{experiment_id}")
def get_experiment(experiment_id: Id, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        experiment = repo.get(experiment_id)
        return experiment_json(experiment, repo.cohorts(experiment))


@router.get("/experiments/{experiment_id}/progress")
def experiment_progress(experiment_id: Id, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        return repo.progress(repo.get(experiment_id))


@router.get("/experiments/{experiment_id}/results")
def experiment_results(experiment_id: Id, request: Request, principal: Reader) -> dict[str, Any]:
    """Status and, per cohort × criterion, mean, n, n_scored, coverage and the 95% interval."""
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        experiment = repo.get(experiment_id)
        return {**repo.summary(experiment), "progress": repo.progress(experiment)}


@router.get("/experiments/{experiment_id}/rows")
def experiment_rows(
    experiment_id: Id,
    request: Request,
    principal: Reader,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """Per cohort × example: question, answer, contexts, and each criterion's value or typed error."""
    with state_of(request).transaction() as session:
        repo = ExperimentRepo(session, principal.project_id)
        rows, next_cursor = repo.rows(repo.get(experiment_id), limit=limit, cursor=cursor)
        return page(rows, next_cursor)


__all__ = ["router"]
