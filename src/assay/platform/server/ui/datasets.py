"""The dataset pages: the list, and the editor of a dataset's latest version (edit an example in
its row, add one, remove one) with its version history. Every change saves a new version through
`DatasetRepo.replace`, as a PUT of the API does, with the API's example validation; a change made
to a version that is no longer the latest is a 409 and nothing is written."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import ExampleIn
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import DatasetRepo
from assay.platform.server.ui.web import (
    UI,
    UiError,
    field,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
    templates,
)

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
PASSAGE_BREAK = "\n---\n"


def _dataset(repo: DatasetRepo, dataset_id: int) -> models.Dataset:
    try:
        return repo.get(dataset_id)
    except ApiError:
        raise UiError(404, f"no dataset {dataset_id} in this project") from None


def passages(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value or []]


def example_dict(example: models.Example) -> dict[str, Any]:
    return {
        "question": example.question,
        "ground_truth_context": example.ground_truth_context,
        "ground_truth_answer": example.ground_truth_answer,
    }


@router.get("/datasets")
def datasets(request: Request, project_id: int) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, project_id)
        rows, _next = repo.list(name=None, limit=500, cursor=None)
        listed = [(d, repo.version(d)) for d in rows]
    return render(request, "datasets.html", project=access.project, datasets=listed)


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request, project_id: int, dataset_id: int, version: int | None = None
) -> Response:
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, project_id)
        dataset = _dataset(repo, dataset_id)
        try:
            shown = repo.version(dataset, version)
        except ApiError:
            raise UiError(404, f"dataset {dataset.name!r} has no version {version}") from None
        examples = repo.all_examples(shown)
        versions, _next = repo.versions(dataset, limit=500, cursor=None)
    return render(
        request,
        "dataset.html",
        project=access.project,
        dataset=dataset,
        shown=shown,
        examples=examples,
        versions=list(reversed(versions)),
        passages=passages,
        editable=shown.version == dataset.latest_version,
    )


@router.get("/datasets/{dataset_id}/examples/{position}/edit")
def edit_row(request: Request, project_id: int, dataset_id: int, position: int) -> HTMLResponse:
    """The row of one example as a form (htmx swaps it in place of the row)."""
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, project_id)
        dataset = _dataset(repo, dataset_id)
        examples = repo.all_examples(repo.version(dataset))
        if not 0 <= position < len(examples):
            raise UiError(404, f"dataset {dataset.name!r} has no example at position {position}")
    body = templates.get_template("fragments/example_form.html").render(
        project=access.project,
        dataset=dataset,
        example=examples[position],
        position=position,
        passages=passages,
        csrf=access.viewer.csrf,
    )
    return HTMLResponse(body)


def _example_from(form: Any, where: str) -> dict[str, Any]:
    contexts = [p.strip() for p in field(form, "contexts").split(PASSAGE_BREAK)]
    try:
        example = ExampleIn(
            question=field(form, "question"),
            ground_truth_context=[p for p in contexts if p],
            ground_truth_answer=field(form, "answer"),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = ".".join(str(p) for p in problem["loc"])
        raise UiError(422, f"{where}.{name}: {problem['msg']}", "Not saved") from None
    return example.model_dump()


async def _change(request: Request, project_id: int, dataset_id: int, action: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    try:
        base = int(str(form.get("base_version") or ""))
        position = int(str(form.get("position") or "-1"))
    except ValueError:
        raise UiError(422, "base_version: the form lost its version; reload the page") from None
    new = _example_from(form, f"examples[{position}]") if action != "remove" else None

    def save() -> None:
        with state_of(request).transaction() as session:
            repo = DatasetRepo(session, project_id)
            dataset = _dataset(repo, dataset_id)
            if dataset.latest_version != base:
                raise UiError(
                    409,
                    f"dataset {dataset.name!r} is at version {dataset.latest_version} now; your "
                    f"change was made to version {base} — reload and redo it",
                    "Changed meanwhile",
                )
            examples = [example_dict(e) for e in repo.all_examples(repo.version(dataset))]
            if action == "add":
                assert new is not None  # only "remove" comes without an example
                examples.append(new)
            elif not 0 <= position < len(examples):
                raise UiError(404, f"no example at position {position}")
            elif action == "remove":
                del examples[position]
            else:
                assert new is not None
                examples[position] = new
            repo.replace(
                dataset.id,
                {
                    "name": dataset.name,
                    "source_type": dataset.source_type,
                    "source_file": dataset.source_file,
                    "examples": examples,
                },
            )

    await run_in_threadpool(save)
    return see_other(f"{UI}/p/{project_id}/datasets/{dataset_id}")


@router.post("/datasets/{dataset_id}/examples/edit")
async def save_example(request: Request, project_id: int, dataset_id: int) -> Response:
    return await _change(request, project_id, dataset_id, "edit")


@router.post("/datasets/{dataset_id}/examples/add")
async def add_example(request: Request, project_id: int, dataset_id: int) -> Response:
    return await _change(request, project_id, dataset_id, "add")


@router.post("/datasets/{dataset_id}/examples/remove")
async def remove_example(request: Request, project_id: int, dataset_id: int) -> Response:
    return await _change(request, project_id, dataset_id, "remove")


__all__ = ["PASSAGE_BREAK", "passages", "router"]
