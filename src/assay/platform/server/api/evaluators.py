"""Routes of online evaluators under /api/v1/evaluators, addressed by name: create, list, get,
save over (a change of what decides a score is a new version), pause, resume, backfill over a
time range, delete. Each evaluator's JSON carries its status: active or paused, version, how many
traces of this version are pending, scored, in error or skipped for the budget, the day's count
and the last error (`storage.evaluators.evaluator_json`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response

from assay.platform.server.api.deps import Cursor, Limit, Reader, Writer, page, state_of
from assay.platform.server.errors import invalid
from assay.platform.server.schemas.bodies import _storable
from assay.platform.server.schemas.evaluators import BackfillIn, EvaluatorIn
from assay.platform.server.schemas.model_names import check_model
from assay.platform.server.storage.evaluators import EvaluatorRepo, backfill, evaluator_json

router = APIRouter(prefix="/api/v1")


def _evaluator_name(name: str = Path(min_length=1, max_length=200)) -> str:
    """A name from the path; one no evaluator can have (NUL, lone surrogates) is a 422."""
    try:
        return _storable(name)
    except ValueError as exc:
        raise invalid("name", str(exc)) from None


EvaluatorName = Annotated[str, Depends(_evaluator_name)]


def _answer(repo: EvaluatorRepo, evaluator: Any) -> dict[str, Any]:
    return evaluator_json(evaluator, repo.counts(evaluator))


@router.post("/evaluators", status_code=201)
def create_evaluator(body: EvaluatorIn, request: Request, principal: Writer) -> dict[str, Any]:
    """A new evaluator takes traces from now on; `backfill` takes stored ones."""
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        values = repo.rule(body.model_dump())
        check_model("judge_model", values["judge_model"])
        return _answer(repo, repo.create(values))


@router.get("/evaluators")
def list_evaluators(
    request: Request, principal: Reader, limit: Limit = 100, cursor: Cursor = None
) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        rows, next_cursor = repo.list(limit=limit, cursor=cursor)
        return page([_answer(repo, e) for e in rows], next_cursor)


@router.get("/evaluators/{name}")
def get_evaluator(name: EvaluatorName, request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        return _answer(repo, repo.get(name))


@router.put("/evaluators/{name}")
def save_evaluator(
    name: EvaluatorName, body: EvaluatorIn, request: Request, principal: Writer
) -> dict[str, Any]:
    """Save the rule over the evaluator `name` (the body's name must be the same: an evaluator's
    scores carry its name). A changed condition, sample rate, criteria, judge or scope is a new
    version; the scores of earlier versions stay on their traces."""
    if body.name != name:
        raise invalid("name", f"the body names {body.name!r}, the path {name!r}")
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        repo.get(name)  # no such evaluator: a 404 before what the body names is looked at
        values = repo.rule(body.model_dump())
        check_model("judge_model", values["judge_model"])
        return _answer(repo, repo.replace(name, values))


@router.post("/evaluators/{name}/pause")
def pause_evaluator(name: EvaluatorName, request: Request, principal: Writer) -> dict[str, Any]:
    """Traces arriving while paused are not taken; those taken before wait for the resume."""
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        return _answer(repo, repo.set_status(name, "paused"))


@router.post("/evaluators/{name}/resume")
def resume_evaluator(name: EvaluatorName, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        return _answer(repo, repo.set_status(name, "active"))


@router.post("/evaluators/{name}/backfill")
def backfill_evaluator(
    name: EvaluatorName, body: BackfillIn, request: Request, principal: Writer
) -> dict[str, Any]:
    """Take the stored traces that arrived in [since, until) (until: now) that the evaluator
    matches and samples and has not scored at this version; `taken` says how many."""
    state = state_of(request)
    with state.transaction() as session:
        ident = EvaluatorRepo(session, principal.project_id).get(name).id
    taken = backfill(state.transaction, principal.project_id, ident, body.since, body.until)
    with state.transaction() as session:
        repo = EvaluatorRepo(session, principal.project_id)
        return {"taken": taken, "evaluator": _answer(repo, repo.get(name))}


@router.delete("/evaluators/{name}", status_code=204)
def delete_evaluator(name: EvaluatorName, request: Request, principal: Writer) -> Response:
    """The evaluator goes; the scores it stored stay on their traces."""
    with state_of(request).transaction() as session:
        EvaluatorRepo(session, principal.project_id).delete(name)
    return Response(status_code=204)


__all__ = ["router"]
