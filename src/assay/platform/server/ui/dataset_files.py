"""Datasets in and out of the UI: CSV or JSONL export of a version, import of a file as a new
dataset or as a new version of one (its examples replaced), and the diff of two versions.

A file has one example per row or line: `question` (required), `ground_truth_answer` (or
`answer`) and `ground_truth_context` (or `contexts`: a JSON list of passages, or one plain
passage). Every row is checked as the API checks an example; a bad one names its row and field
and nothing is saved."""

from __future__ import annotations

import csv
import difflib
import io
import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import DatasetIn
from assay.platform.server.schemas.dataset_files import COLUMNS, ImportRefused, parse_examples
from assay.platform.server.storage.repos import DatasetRepo
from assay.platform.server.ui.datasets import _dataset, example_dict
from assay.platform.server.ui.web import (
    UI,
    UiError,
    field,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
)

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui


def to_csv(examples: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for e in examples:
        context = e["ground_truth_context"]
        writer.writerow(
            [
                e["question"],
                e["ground_truth_answer"],
                json.dumps(context, ensure_ascii=False)
                if not isinstance(context, str)
                else context,
            ]
        )
    return out.getvalue()


def to_jsonl(examples: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples)


@router.get("/datasets/{dataset_id}/export.{kind}")
def export(
    request: Request, project_id: int, dataset_id: int, kind: str, version: int | None = None
) -> Response:
    member(request, project_id)
    if kind not in ("csv", "jsonl"):
        raise UiError(404, "export as .csv or .jsonl")
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, project_id)
        dataset = _dataset(repo, dataset_id)
        try:
            shown = repo.version(dataset, version)
        except ApiError:
            raise UiError(404, f"dataset {dataset.name!r} has no version {version}") from None
        examples = [example_dict(e) for e in repo.all_examples(shown)]
    body = to_csv(examples) if kind == "csv" else to_jsonl(examples)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in dataset.name)[:80] or "dataset"
    return Response(
        body,
        media_type="text/csv" if kind == "csv" else "application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{safe}-v{shown.version}.{kind}"'},
    )


@router.get("/datasets-import")
def import_page(request: Request, project_id: int) -> Response:
    access = member(request, project_id)
    return render(request, "dataset_import.html", project=access.project)


@router.post("/datasets-import")
async def import_file(request: Request, project_id: int) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise UiError(422, "file: choose a .csv or .jsonl file", "Not imported")
    kind = "jsonl" if upload.filename.lower().endswith((".jsonl", ".ndjson")) else "csv"
    try:
        text = (await upload.read()).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UiError(422, "file: not UTF-8 text", "Not imported") from None
    try:
        examples = parse_examples(text, kind)
    except ImportRefused as exc:
        raise UiError(422, str(exc), "Not imported") from None
    name = field(form, "name").strip() or upload.filename.rsplit(".", 1)[0]
    try:
        body = DatasetIn(name=name, source_type=kind, source_file=upload.filename[:1000])
    except ValidationError as exc:
        raise UiError(422, f"name: {exc.errors()[0]['msg']}", "Not imported") from None

    def save() -> int:
        with state_of(request).transaction() as session:
            repo = DatasetRepo(session, project_id)
            values = {**body.model_dump(), "examples": examples}
            existing = repo.by_name(body.name)
            if existing is None:
                return repo.create(values)[0].id
            return repo.replace(existing.id, values)[0].id

    dataset_id = await run_in_threadpool(save)
    return see_other(f"{UI}/p/{project_id}/datasets/{dataset_id}")


@router.get("/datasets/{dataset_id}/diff")
def diff(request: Request, project_id: int, dataset_id: int, a: int, b: int) -> Response:
    """Version `a` against version `b`, example by example (difflib's matching of sequences)."""
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        repo = DatasetRepo(session, project_id)
        dataset = _dataset(repo, dataset_id)
        try:
            old = [example_dict(e) for e in repo.all_examples(repo.version(dataset, a))]
            new = [example_dict(e) for e in repo.all_examples(repo.version(dataset, b))]
        except ApiError as exc:
            raise UiError(404, exc.message) from None
    keys = [[json.dumps(e, sort_keys=True) for e in side] for side in (old, new)]
    changes = []
    matcher = difflib.SequenceMatcher(a=keys[0], b=keys[1], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changes.append(
            {
                "tag": {"replace": "changed", "delete": "removed", "insert": "added"}[tag],
                "old": list(enumerate(old[i1:i2], start=i1)),
                "new": list(enumerate(new[j1:j2], start=j1)),
            }
        )
    return render(
        request,
        "dataset_diff.html",
        project=access.project,
        dataset=dataset,
        a=a,
        b=b,
        changes=changes,
        same=len(old) - sum(len(c["old"]) for c in changes),
    )


__all__ = ["parse_examples", "router", "to_csv", "to_jsonl"]
