"""Task and criteria forms: list, create and edit, with the validation the SDK and the API use
(the request schemas, then `criteria_rules.check` with RE2 for criteria). A refused form is shown
again with what was typed and the problem beside the field it names."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform import criteria_rules
from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import CriteriaIn, TaskIn
from assay.platform.server.storage.repos import CriteriaRepo, NamedRepo, TaskRepo
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
KINDS: dict[str, tuple[type[NamedRepo[Any]], type[BaseModel], tuple[str, ...]]] = {
    "tasks": (TaskRepo, TaskIn, ("name", "generator_model", "system_prompt")),
    "criteria": (
        CriteriaRepo,
        CriteriaIn,
        tuple(f for f in criteria_rules.FIELDS if f != "validation_status"),
    ),
}


def _kind(kind: str) -> tuple[type[NamedRepo[Any]], type[BaseModel], tuple[str, ...]]:
    if kind not in KINDS:
        raise UiError(404, "no such page")
    return KINDS[kind]


def validate(kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """The stored values of a form, or ApiError(422) naming the field at fault."""
    _repo, schema, _fields = _kind(kind)
    try:
        body = schema.model_validate(values).model_dump()
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = ".".join(str(p) for p in problem["loc"]) or "body"
        message = str(problem["msg"]).removeprefix("Value error, ")
        raise ApiError(422, "validation_error", f"{name}: {message}", field=name) from None
    if kind == "criteria":
        try:
            return criteria_rules.check(body, require_re2=True)
        except criteria_rules.CriteriaProblem as exc:
            raise ApiError(422, "validation_error", str(exc), field=exc.field) from None
    return body


def _form_values(kind: str, form: Any) -> dict[str, Any]:
    _repo, _schema, fields = _kind(kind)
    values: dict[str, Any] = {name: field(form, name) for name in fields}
    if kind == "criteria":
        values["case_sensitive"] = form.get("case_sensitive") == "on"
    return values


def listing(request: Request, project_id: int, kind: str) -> Response:
    repo_type, _schema, _fields = _kind(kind)
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        rows, _next = repo_type(session, project_id).list(name=None, limit=500, cursor=None)
    return render(request, "objects.html", project=access.project, kind=kind, rows=rows)


def _form_page(
    request: Request,
    access: Access,
    kind: str,
    values: dict[str, Any],
    ident: int | None,
    problem: ApiError | None = None,
) -> Response:
    return render(
        request,
        f"{kind}_form.html",
        status=problem.status if problem else 200,
        project=access.project,
        kind=kind,
        values=values,
        ident=ident,
        problem=problem.message if problem else "",
        problem_field=(problem.field or "") if problem else "",
        match_types=criteria_rules.MATCH_TYPES,
    )


def new_form(request: Request, project_id: int, kind: str) -> Response:
    access = member(request, project_id)
    values = {"criteria_type": "llm_judge", "output_type": "5-point"} if kind == "criteria" else {}
    return _form_page(request, access, kind, values, None)


def edit_form(request: Request, project_id: int, kind: str, ident: int) -> Response:
    repo_type, _schema, fields = _kind(kind)
    access = member(request, project_id)
    with state_of(request).transaction() as session:
        try:
            row = repo_type(session, project_id).get(ident)
        except ApiError:
            raise UiError(404, f"no {kind} {ident} in this project") from None
        values = {name: getattr(row, name) for name in fields}
    return _form_page(request, access, kind, values, ident)


async def save(request: Request, project_id: int, kind: str, ident: int | None) -> Response:
    repo_type, _schema, _fields = _kind(kind)
    access = await run_in_threadpool(member, request, project_id)
    form = await require_csrf(request, access.viewer.csrf)
    values = _form_values(kind, form)

    def store() -> None:
        checked = validate(kind, values)
        with state_of(request).transaction() as session:
            repo = repo_type(session, project_id)
            if ident is None:
                repo.create(checked)
            else:
                repo.replace(ident, checked)

    try:
        await run_in_threadpool(store)
    except ApiError as exc:
        if exc.status not in (409, 422):
            raise
        return await run_in_threadpool(_form_page, request, access, kind, values, ident, exc)
    return see_other(f"{UI}/p/{project_id}/{kind}")


def _routes(kind: str) -> None:
    """The pages of one kind, on literal paths (so they can never shadow another page)."""

    def list_page(request: Request, project_id: int) -> Response:
        return listing(request, project_id, kind)

    def new_page(request: Request, project_id: int) -> Response:
        return new_form(request, project_id, kind)

    def edit_page(request: Request, project_id: int, ident: int) -> Response:
        return edit_form(request, project_id, kind, ident)

    async def create(request: Request, project_id: int) -> Response:
        return await save(request, project_id, kind, None)

    async def replace(request: Request, project_id: int, ident: int) -> Response:
        return await save(request, project_id, kind, ident)

    router.add_api_route(f"/{kind}", list_page, methods=["GET"])
    router.add_api_route(f"/{kind}/new", new_page, methods=["GET"])
    router.add_api_route(f"/{kind}/{{ident}}", edit_page, methods=["GET"])
    router.add_api_route(f"/{kind}", create, methods=["POST"])
    router.add_api_route(f"/{kind}/{{ident}}", replace, methods=["POST"])


for _name in KINDS:
    _routes(_name)


__all__ = ["router", "validate"]
