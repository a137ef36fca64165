"""What a person can do from a trace's page: label it (a criterion and a value, with a
comment), add it to a dataset as an example, or send it to a review queue. Each is a form
post (CSRF-checked) that answers with the trace's page again, saying what was done; a value
the API would refuse is refused here the same way, naming the field."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import ValidationError

from assay.platform.server.schemas.traces import LabelIn, ToDataset
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.review import _trace_id
from assay.platform.server.ui.web import (
    UI,
    UiError,
    field,
    member,
    require_csrf,
    see_other,
    state_of,
)

router = APIRouter(prefix="/p/{project_id}")


def label_value(text: str) -> Any:
    """A typed label from a text box: true/false, a number, else the text itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        number = float(text)
    except ValueError:
        return text.strip()
    if not math.isfinite(number):
        return text.strip()
    return int(number) if number.is_integer() and "." not in text else number


def _checked(model: Any, values: dict[str, Any], what: str) -> Any:
    try:
        return model(**values)
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = ".".join(str(p) for p in problem["loc"])
        raise UiError(422, f"{name}: {problem['msg']}", f"The trace was not {what}") from None


def _back(project_id: int, trace_id: str, done: str) -> Response:
    return see_other(f"{UI}/p/{project_id}/traces/{trace_id}?done={quote(done, safe='')}")


@router.post("/traces/{trace_id}/label")
async def label(request: Request, project_id: int, trace_id: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)
    body = _checked(
        LabelIn,
        {
            "criterion": field(form, "criterion").strip(),
            "value": label_value(field(form, "value")),
            "comment": field(form, "comment"),
        },
        "labelled",
    )

    def store() -> None:
        with state_of(request).transaction() as session:
            TraceRepo(session, project_id).add_label(
                ident,
                criterion=body.criterion,
                value=body.value,
                author=access.viewer.author,
                comment=body.comment,
            )

    await run_in_threadpool(store)
    return _back(project_id, ident, f"labelled {body.criterion}: {body.value}")


@router.post("/traces/{trace_id}/to-dataset")
async def to_dataset(request: Request, project_id: int, trace_id: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)
    body = _checked(
        ToDataset,
        {"trace_ids": [ident], "dataset": field(form, "dataset").strip()},
        "added to a dataset",
    )

    def store() -> dict[str, Any]:
        with state_of(request).transaction() as session:
            return TraceRepo(session, project_id).to_dataset(body.trace_ids, body.dataset)

    added = await run_in_threadpool(store)  # an ApiError is the UI's error page (mount.py)
    said = "added to" if added["added"] else "already in"
    return _back(project_id, ident, f"{said} dataset {body.dataset} (version {added['version']})")


@router.post("/traces/{trace_id}/to-queue")
async def to_queue(request: Request, project_id: int, trace_id: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    ident = _trace_id(trace_id)
    raw = field(form, "queue_id").strip()
    if not raw.isdigit():
        raise UiError(422, "queue_id: choose a review queue", "The trace was not sent")

    def store() -> tuple[str, int]:
        with state_of(request).transaction() as session:
            TraceRepo(session, project_id).get(ident)
            queues = QueueRepo(session, project_id)
            queue = queues.find_by_id(int(raw))
            if queue is None:
                raise UiError(404, f"queue_id: no review queue {raw} in this project")
            return queue.name, queues.enter(queue, None, [ident])

    name, entered = await run_in_threadpool(store)
    said = "sent to" if entered else "already in"
    return _back(project_id, ident, f"{said} review queue {name}")


__all__ = ["label_value", "router"]
