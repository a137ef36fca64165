"""Routes of review queues under /api/v1/review-queues, addressed by name: create (the matching
stored traces, or for `scope="session"` their sessions, enter at once), list, get, edit with a
version check, delete, the queue's traces or sessions, and the export of labelled rows."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from assay.platform.server.api.deps import Reader, Writer, page, state_of
from assay.platform.server.errors import invalid
from assay.platform.server.schemas.agent_criteria import is_agent_criterion, needs_judge
from assay.platform.server.schemas.bodies import _storable
from assay.platform.server.schemas.model_names import check_model
from assay.platform.server.schemas.traces import QueueIn, QueuePatch
from assay.platform.server.storage.evaluators import unknown_criterion
from assay.platform.server.storage.repos import MAX_PAGE, CriteriaRepo, iso
from assay.platform.server.storage.review import QueueRepo, queue_json
from assay.platform.server.storage.review_sessions import SessionQueue
from assay.platform.server.storage.traces import TraceRepo

router = APIRouter(prefix="/api/v1")

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=20)]


def _queue_name(name: str = Path(min_length=1, max_length=200)) -> str:
    """A queue name from the path; one no queue can have (NUL, lone surrogates) is a 422."""
    try:
        return _storable(name)
    except ValueError as exc:
        raise invalid("name", str(exc)) from None


QueueName = Annotated[str, Depends(_queue_name)]
Status = Annotated[Literal["pending", "done", "unsampled"] | None, Query()]


def _check_criteria(session: Any, project_id: int, values: dict[str, Any]) -> None:
    """A queue that is judged names criteria the project has (the judge needs their wording);
    ordering or sampling by the judge's uncertainty needs a judge; a session queue has no
    dataset (a conversation is not one example)."""
    if values.get("scope") == "session" and values.get("dataset"):
        raise invalid(
            "dataset",
            "a session queue's items are whole conversations, which a dataset of single "
            "examples cannot hold; leave dataset out (export the labels instead)",
        )
    if not values.get("judge_model"):
        if values.get("order") == "uncertainty":
            raise invalid("order", "ordering by uncertainty needs a judge_model to be unsure")
        if values.get("sample_rate") is not None:
            raise invalid("sample_rate", "sampling by uncertainty needs a judge_model")
        return
    names = values.get("criteria") or []
    if not names:
        raise invalid("criteria", "a queue with a judge_model needs at least one criterion")
    rows = {row.name: row for row in CriteriaRepo(session, project_id).by_names(names)}
    for index, name in enumerate(names):
        if name not in rows and not is_agent_criterion(name):
            raise invalid(f"criteria[{index}]", unknown_criterion(name))
    agents = [n for n in names if n not in rows and needs_judge(n)]
    if agents or any(row.criteria_type == "llm_judge" for row in rows.values()):
        check_model("judge_model", values["judge_model"])


@router.post("/review-queues", status_code=201)
def create_queue(body: QueueIn, request: Request, principal: Writer) -> dict[str, Any]:
    values = body.model_dump()
    values["criteria"] = list(dict.fromkeys(values["criteria"]))
    with state_of(request).transaction() as session:
        _check_criteria(session, principal.project_id, values)
        repo = QueueRepo(session, principal.project_id)
        queue = repo.create(values)
        return queue_json(queue, repo.counts(queue))


@router.get("/review-queues")
def list_queues(
    request: Request, principal: Reader, limit: Limit = 100, cursor: Cursor = None
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, principal.project_id)
        rows, next_cursor = repo.list(limit=limit, cursor=cursor)
        return page([queue_json(q, repo.counts(q)) for q in rows], next_cursor)


@router.get("/review-queues/{name}")
def get_queue(name: QueueName, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, principal.project_id)
        queue = repo.get(name)
        return queue_json(queue, repo.counts(queue))


@router.patch("/review-queues/{name}")
def edit_queue(
    name: QueueName, body: QueuePatch, request: Request, principal: Writer
) -> dict[str, Any]:
    changes = {f: getattr(body.changes, f) for f in body.changes.model_fields_set}
    if not changes:
        raise invalid("changes", "name at least one field to change")
    if "condition" in changes and changes["condition"] is None:
        changes["condition"] = ""
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, principal.project_id)
        current = repo.get(name)
        merged = {
            "judge_model": changes.get("judge_model", current.judge_model),
            "criteria": changes.get("criteria", current.criteria),
            "order": changes.get("order", current.order_by),
            "sample_rate": changes.get("sample_rate", current.sample_rate),
            "dataset": changes.get("dataset", current.dataset),
            "scope": current.scope,
        }
        if {"criteria", "judge_model", "order", "sample_rate", "dataset"} & set(changes):
            _check_criteria(session, principal.project_id, merged)
        queue = repo.update(name, body.version, changes)
        return queue_json(queue, repo.counts(queue))


@router.delete("/review-queues/{name}", status_code=204)
def delete_queue(name: QueueName, request: Request, principal: Writer) -> Response:
    """The queue and its items go; the traces, their scores and labels stay."""
    with state_of(request).transaction() as session:
        QueueRepo(session, principal.project_id).delete(name)
    return Response(status_code=204)


@router.get("/review-queues/{name}/traces")
def queue_traces(
    name: QueueName,
    request: Request,
    principal: Reader,
    status: Status = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """The queue's traces in the order they entered, each with its item's status."""
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, principal.project_id)
        queue = repo.get(name)
        if queue.scope == "session":
            raise invalid(
                "name",
                f"review queue {name!r} holds sessions: read its items at "
                f"/review-queues/{{name}}/sessions",
            )
        pairs, next_cursor = repo.items(queue, status=status, limit=limit, cursor=cursor)
        traces = TraceRepo(session, principal.project_id).as_json([t for _i, t in pairs])
        items = [
            {
                **trace,
                "queue_item": {
                    "status": item.status,
                    "entered_at": iso(item.entered_at),
                    "uncertainty": item.uncertainty,
                    "inclusion_probability": item.inclusion_probability,
                },
            }
            for (item, _t), trace in zip(pairs, traces, strict=True)
        ]
        return page(items, next_cursor)


@router.get("/review-queues/{name}/sessions")
def queue_sessions(
    name: QueueName,
    request: Request,
    principal: Reader,
    status: Status = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """A session queue's sessions in the order they entered: each its id, trace count, content
    key, first and last time as they are now, with its item (status, uncertainty, ...)."""
    with state_of(request).transaction() as session:
        queue = QueueRepo(session, principal.project_id).get(name)
        if queue.scope != "session":
            raise invalid(
                "name",
                f"review queue {name!r} holds traces: read its items at "
                f"/review-queues/{{name}}/traces",
            )
        repo = SessionQueue(session, principal.project_id)
        items, next_cursor = repo.items(queue, status=status, limit=limit, cursor=cursor)
        found = repo.summaries([i.session_id for i in items])
        return page([repo.item_json(i, found.get(i.session_id)) for i in items], next_cursor)


@router.get("/review-queues/{name}/export")
def export_queue(
    name: QueueName,
    request: Request,
    principal: Reader,
    limit: Limit = MAX_PAGE,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """Labelled rows for alignment: input, output, contexts, the human label and the judge's
    score; a session queue's rows also name the session and the content labelled."""
    with state_of(request).transaction() as session:
        repo = QueueRepo(session, principal.project_id)
        queue = repo.get(name)
        if queue.scope == "session":
            exporter = SessionQueue(session, principal.project_id)
            rows, next_cursor = exporter.export(queue, limit=limit, cursor=cursor)
        else:
            rows, next_cursor = repo.export(queue, limit=limit, cursor=cursor)
        return {"rows": rows, "next_cursor": next_cursor}


__all__ = ["router"]
