"""The online evaluators page of a project: each evaluator with its status (active or paused,
version, scope, traces or sessions scored, in error, pending and skipped for the daily budget,
the last error) and
its actions (pause, resume, backfill the last days), and a form to create one. The rules and
their checks are the API's (`schemas.evaluators.EvaluatorIn`, `EvaluatorRepo.rule`): a problem
is shown beside the form, naming the field, with what was typed kept."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta, timezone
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.agent_criteria import AGENT_CRITERIA
from assay.platform.server.schemas.evaluators import SETTLE_DEFAULT, EvaluatorIn
from assay.platform.server.schemas.model_names import check_model
from assay.platform.server.storage import models
from assay.platform.server.storage.evaluators import EvaluatorRepo, backfill, evaluator_json
from assay.platform.server.storage.repos import MAX_PAGE, CriteriaRepo
from assay.platform.server.ui.web import (
    UI,
    Access,
    UiError,
    field,
    member,
    render,
    require_csrf,
    see_other,
    state_of,
)

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
BACKFILL_DAYS = (1, 7, 30)
DEFAULTS: dict[str, Any] = {
    "sample_rate": "1",
    "criteria": [],
    "scope": "trace",
    "settle_seconds": str(SETTLE_DEFAULT),
}
FORM_FIELDS = (
    "name",
    "condition",
    "sample_rate",
    "judge_model",
    "daily_budget",
    "scope",
    "settle_seconds",
)


def _page(
    request: Request,
    access: Access,
    *,
    values: dict[str, Any] | None = None,
    problem: str = "",
    problem_field: str = "",
    status: int = 200,
) -> Response:
    with state_of(request).transaction() as session:
        repo = EvaluatorRepo(session, access.project_id)
        rows, _next = repo.list(limit=MAX_PAGE, cursor=None)
        evaluators = [evaluator_json(e, repo.counts(e)) for e in rows]
        criteria, _next = CriteriaRepo(session, access.project_id).list(
            name=None, limit=MAX_PAGE, cursor=None
        )
    return render(
        request,
        "evaluators.html",
        status=status,
        project=access.project,
        evaluators=evaluators,
        criteria=[c.name for c in criteria],
        # built-in agent criteria the project has no saved criterion of the same name for
        agent_criteria=[n for n in AGENT_CRITERIA if n not in {c.name for c in criteria}],
        # what was typed, shown again (an empty optional number is an empty field)
        values={k: "" if v is None else v for k, v in (values or DEFAULTS).items()},
        problem=problem,
        problem_field=problem_field,
        backfill_days=BACKFILL_DAYS,
    )


@router.get("/evaluators")
def evaluators(request: Request, project_id: int) -> Response:
    return _page(request, member(request, project_id))


def _body(form: Any) -> dict[str, Any]:
    """The form as the API's body: numbers where the API takes numbers (a text that is not one
    is left as text, so the API's check names the field)."""
    body: dict[str, Any] = {f: field(form, f).strip() for f in FORM_FIELDS}
    body["criteria"] = [c for c in form.getlist("criteria") if isinstance(c, str)]
    for name, kind in (("sample_rate", float), ("daily_budget", int), ("settle_seconds", int)):
        with contextlib.suppress(ValueError):  # left as text: the API's check names it
            body[name] = kind(body[name]) if body[name] else None
    if body["sample_rate"] is None:
        body["sample_rate"] = 1.0
    if body["settle_seconds"] is None:
        body["settle_seconds"] = SETTLE_DEFAULT
    body["scope"] = body["scope"] or "trace"
    return body


@router.post("/evaluators")
async def create_evaluator(request: Request, project_id: int) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    body = _body(form)

    def create() -> None:
        try:
            values = EvaluatorIn.model_validate(body).model_dump()
        except ValidationError as exc:
            problem = exc.errors()[0]
            name = ".".join(str(p) for p in problem["loc"]) or "body"
            message = str(problem["msg"]).removeprefix("Value error, ")
            raise ApiError(422, "validation_error", f"{name}: {message}", field=name) from None
        with state_of(request).transaction() as session:
            repo = EvaluatorRepo(session, access.project_id)
            values = repo.rule(values)
            check_model("judge_model", values["judge_model"])
            repo.create(values)

    try:
        await run_in_threadpool(create)
    except ApiError as exc:
        refused: dict[str, Any] = {
            "values": body,
            "problem": exc.message,
            "problem_field": (exc.field or "").split("[")[0],
            "status": exc.status,
        }
        return await run_in_threadpool(lambda: _page(request, access, **refused))
    return see_other(f"{UI}/p/{project_id}/evaluators")


def _evaluator(session: Any, access: Access, evaluator_id: int) -> models.OnlineEvaluator:
    found = EvaluatorRepo(session, access.project_id).find_by_id(evaluator_id)
    if found is None:
        raise UiError(404, f"no online evaluator {evaluator_id} in this project", "Not found")
    return found


async def _act(request: Request, project_id: int, evaluator_id: int, action: str) -> Response:
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    days = field(form, "days").strip()

    def act() -> None:
        state = state_of(request)
        with state.transaction() as session:
            evaluator = _evaluator(session, access, evaluator_id)
            if action != "backfill":
                status = "paused" if action == "pause" else "active"
                EvaluatorRepo(session, access.project_id).set_status(evaluator.name, status)
                return
        if not days.isdigit() or int(days) not in BACKFILL_DAYS:
            raise UiError(422, f"days: one of {', '.join(map(str, BACKFILL_DAYS))}")
        since = datetime.now(timezone.utc) - timedelta(days=int(days))
        backfill(state.transaction, access.project_id, evaluator_id, since, None)

    await run_in_threadpool(act)
    return see_other(f"{UI}/p/{project_id}/evaluators#evaluator-{evaluator_id}")


@router.post("/evaluators/{evaluator_id}/pause")
async def pause(request: Request, project_id: int, evaluator_id: int) -> Response:
    return await _act(request, project_id, evaluator_id, "pause")


@router.post("/evaluators/{evaluator_id}/resume")
async def resume(request: Request, project_id: int, evaluator_id: int) -> Response:
    return await _act(request, project_id, evaluator_id, "resume")


@router.post("/evaluators/{evaluator_id}/backfill")
async def backfill_days(request: Request, project_id: int, evaluator_id: int) -> Response:
    return await _act(request, project_id, evaluator_id, "backfill")


__all__ = ["router"]
