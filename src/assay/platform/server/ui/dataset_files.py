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

from assay.errors import DataError
from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import EXAMPLES_MAX, DatasetIn, ExampleIn
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
from assay.schema.strict_text import csv_records, strict_json

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
COLUMNS = ("question", "ground_truth_answer", "ground_truth_context")
ALIASES = {"answer": "ground_truth_answer", "contexts": "ground_truth_context"}


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


def _context(value: Any) -> Any:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return parsed
    return value if value is not None else ""


def parse_examples(text: str, kind: str) -> list[dict[str, Any]]:
    """The examples of a CSV or JSONL file; a bad row is a UiError naming it (1-based) and the field."""
    rows: list[tuple[int, dict[str, Any]]] = []
    if kind == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = strict_json(line)
            except json.JSONDecodeError as exc:
                raise UiError(422, f"line {number}: not JSON ({exc.msg})", "Not imported") from None
            except ValueError as exc:  # a key given twice: which value was meant is unknowable
                raise UiError(422, f"line {number}: {exc}", "Not imported") from None
            if not isinstance(value, dict):
                raise UiError(422, f"line {number}: an example is a JSON object", "Not imported")
            rows.append((number, value))
    else:
        # rows numbered as a spreadsheet shows them: the header is row 1
        try:
            rows = list(csv_records(io.StringIO(text, newline=""), first_row=2))
        except DataError as exc:
            where = f"row {exc.row}: " if exc.row is not None else ""
            raise UiError(422, f"{where}{exc.detail}", "Not imported") from None
        if "question" not in rows[0][1]:
            raise UiError(422, "row 1: the CSV header needs a `question` column", "Not imported")
    if len(rows) > EXAMPLES_MAX:
        raise UiError(422, f"the file has {len(rows)} examples; the limit is {EXAMPLES_MAX}")
    examples = []
    where = "line" if kind == "jsonl" else "row"
    for number, row in rows:
        values = {ALIASES.get(k, k): v for k, v in row.items() if k is not None}
        unknown = sorted(set(values) - set(COLUMNS))
        if unknown:
            raise UiError(422, f"{where} {number}: unknown column {unknown[0]!r}", "Not imported")
        values["ground_truth_context"] = _context(values.get("ground_truth_context"))
        values.setdefault("ground_truth_answer", "")
        values["ground_truth_answer"] = values["ground_truth_answer"] or ""
        try:
            examples.append(ExampleIn.model_validate(values).model_dump())
        except ValidationError as exc:
            problem = exc.errors()[0]
            name = ".".join(str(p) for p in problem["loc"]) or "row"
            raise UiError(
                422, f"{where} {number}, {name}: {problem['msg']}", "Not imported"
            ) from None
    return examples


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
    examples = parse_examples(text, kind)
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
