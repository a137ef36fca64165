"""The "New experiment" form: a dataset (and optionally one of its versions), a task, the
criteria, the cohorts (each a generator model or a registered RAG pipeline, with an optional
system prompt) and the judge model.

It is submitted through the API's own path: the body is read into `ExperimentIn` (the request
schema of POST /api/v1/experiments) and stored by `ExperimentRepo.submit_checked`, which makes the
API's checks (the objects exist, one of model or pipeline per cohort, distinct cohort names, the
size limit) and builds each model's provider (`schemas/model_names.py`), so a model name that can
never work is refused here as the API refuses it. A refused form is shown again with what was
typed and the problem beside the field it names (the API's field names are the form's: `judge_model`,
`cohorts[1].generator_model`, ...). *Add a cohort* shows the form again with one more cohort row,
keeping what was typed; cohort rows left blank are ignored."""

from __future__ import annotations

import re
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import ExperimentIn
from assay.platform.server.storage.experiments import ExperimentRepo
from assay.platform.server.storage.pipelines import PipelineRepo
from assay.platform.server.storage.repos import CriteriaRepo, DatasetRepo, TaskRepo
from assay.platform.server.ui.web import (
    UI,
    Access,
    field,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
)

COHORT_FIELDS = ("name", "generator_model", "rag_pipeline", "system_prompt")
FIRST_ROWS, MAX_ROWS = 2, 20  # ExperimentIn takes at most 20 cohorts
# a 404 of the submission (no such object) named beside the field that chose the object
NOT_FOUND = (
    ("no version", "dataset_version"),
    ("no dataset", "dataset_id"),
    ("no task", "task_id"),
    ("no criteria", "criteria_ids"),
)
_INTEGER = re.compile(r"^\s*\d{1,12}\s*$")


def _number(text: str) -> Any:
    """A select's or a field's whole number as an int; anything else as typed (the schema then
    names the field)."""
    return int(text) if _INTEGER.match(text) else text


def read_form(form: Any) -> dict[str, Any]:
    """What was typed, as the form shows it again: top-level fields, chosen criteria ids and
    the cohort rows (blank rows included)."""
    typed = field(form, "rows")
    rows = min(MAX_ROWS, max(FIRST_ROWS, int(typed) if _INTEGER.match(typed) else FIRST_ROWS))
    return {
        "name": field(form, "name"),
        "dataset_id": field(form, "dataset_id"),
        "dataset_version": field(form, "dataset_version"),
        "task_id": field(form, "task_id"),
        "judge_model": field(form, "judge_model"),
        "criteria_ids": [str(v) for v in form.getlist("criteria_ids")],
        "cohorts": [
            {name: field(form, f"cohorts[{i}].{name}") for name in COHORT_FIELDS}
            for i in range(rows)
        ],
    }


def body_of(values: dict[str, Any]) -> dict[str, Any]:
    """The API body of the typed values: blank cohort rows dropped, a chosen pipeline as the
    cohort's `rag_pipeline` and the typed model (even '', the task's model) as its
    `generator_model` unless a pipeline was chosen and no model typed."""
    cohorts = []
    for row in values["cohorts"]:
        if not any(row[name].strip() for name in COHORT_FIELDS):
            continue
        cohort: dict[str, Any] = {"name": row["name"].strip()}
        pipeline, model = row["rag_pipeline"].strip(), row["generator_model"].strip()
        if pipeline:
            cohort["rag_pipeline"] = pipeline
        if model or not pipeline:
            cohort["generator_model"] = model
        if row["system_prompt"].strip():
            cohort["system_prompt"] = row["system_prompt"]
        cohorts.append(cohort)
    body: dict[str, Any] = {
        "name": values["name"].strip(),
        "dataset_id": _number(values["dataset_id"]),
        "task_id": _number(values["task_id"]),
        "criteria_ids": [_number(v) for v in values["criteria_ids"]],
        "judge_model": values["judge_model"].strip(),
        "cohorts": cohorts,
    }
    if values["dataset_version"].strip():
        body["dataset_version"] = _number(values["dataset_version"])
    return body


def _schema_problem(exc: ValidationError) -> ApiError:
    """The first problem of the request schema, named as the API names it (`cohorts[0].name`)."""
    problem = exc.errors()[0]
    parts: list[str] = []
    for part in problem["loc"]:
        if isinstance(part, int) and parts:
            parts[-1] += f"[{part}]"
        else:
            parts.append(str(part))
    name = ".".join(parts) or "body"
    message = str(problem["msg"]).removeprefix("Value error, ")
    return ApiError(422, "validation_error", f"{name}: {message}", field=name)


def _choices(request: Request, project_id: int) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        datasets, _ = DatasetRepo(session, project_id).list(name=None, limit=500, cursor=None)
        tasks, _ = TaskRepo(session, project_id).list(name=None, limit=500, cursor=None)
        criteria, _ = CriteriaRepo(session, project_id).list(name=None, limit=500, cursor=None)
        pipelines = PipelineRepo(session, project_id).all()
        return {
            "datasets": [(d.id, d.name, d.latest_version) for d in datasets],
            "tasks": [(t.id, t.name, t.generator_model) for t in tasks],
            "criteria": [(c.id, c.name, c.criteria_type, c.output_type) for c in criteria],
            "pipelines": [p.name for p in pipelines],
        }


def _form_page(
    request: Request, access: Access, values: dict[str, Any], problem: ApiError | None = None
) -> Response:
    problem_field = (problem.field or "") if problem else ""
    if problem is not None and problem.status == 404:  # an object gone since the form was drawn
        problem_field = next(
            (name for start, name in NOT_FOUND if problem.message.startswith(start)), ""
        )
    if problem_field == "task.generator_model":  # the task's model: shown beside the task
        problem_field = "task_id"
    return render(
        request,
        "experiment_form.html",
        status=problem.status if problem else 200,
        project=access.project,
        values=values,
        problem=problem.message if problem else "",
        problem_field=problem_field,
        **_choices(request, access.project_id),
    )


def new_experiment(request: Request, project_id: int) -> Response:
    access = member(request, project_id)
    blank = {name: "" for name in COHORT_FIELDS}
    values = {
        "name": "",
        "dataset_id": "",
        "dataset_version": "",
        "task_id": "",
        "judge_model": "",
        "criteria_ids": [],
        "cohorts": [dict(blank) for _ in range(FIRST_ROWS)],
    }
    return _form_page(request, access, values)


async def submit_experiment(request: Request, project_id: int) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    values = read_form(form)
    if form.get("more") is not None:  # "Add a cohort": the same form, one row more
        if len(values["cohorts"]) < MAX_ROWS:
            values["cohorts"].append({name: "" for name in COHORT_FIELDS})
        return await run_in_threadpool(_form_page, request, access, values)

    def store() -> int:
        try:
            body = ExperimentIn.model_validate(body_of(values)).model_dump()
        except ValidationError as exc:
            raise _schema_problem(exc) from None
        with state_of(request).transaction() as session:
            return ExperimentRepo(session, project_id).submit_checked(body).id

    try:
        ident = await run_in_threadpool(store)
    except ApiError as exc:
        if exc.status not in (404, 409, 422):
            raise
        return await run_in_threadpool(_form_page, request, access, values, exc)
    return see_other(f"{UI}/p/{project_id}/experiments/{ident}")


__all__ = ["body_of", "new_experiment", "read_form", "submit_experiment"]
