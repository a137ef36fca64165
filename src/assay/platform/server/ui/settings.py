"""A project's settings, for its admins: API keys (create — the key is shown once — and revoke),
members (add an existing user with a role, change a role, remove) and retention (how many days
its traces are kept; empty: the server's default). Everyone else gets a 403."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from assay.errors import UsageError
from assay.platform.server.auth import keys as auth
from assay.platform.server.auth import users
from assay.platform.server.schemas.bodies import RETENTION_DAYS_MAX
from assay.platform.server.storage.access import KeyRepo, MemberRepo, user_by_name
from assay.platform.server.storage.retention import retention_days_of, set_retention_days
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


def admin(request: Request, project_id: int) -> Access:
    access = member(request, project_id)
    if access.project.role != "admin":
        raise UiError(403, "only a project admin can see or change its settings", "Forbidden")
    return access


def _page(
    request: Request,
    access: Access,
    new_key: str = "",
    status: int = 200,
    retention_error: tuple[str, str] | None = None,
) -> Response:
    """The settings page; `retention_error` (message, the value entered) shows the retention
    form again with what was typed and why it was not saved."""
    with state_of(request).transaction() as session:
        keys = [k for k, _name in auth.list_keys(session, access.project.project_name)]
        members = MemberRepo(session, access.project_id).members()
        retention = retention_days_of(session, access.project_id)
    response = render(
        request,
        "settings.html",
        status=status,
        project=access.project,
        keys=keys,
        members=members,
        scopes=auth.SCOPES,
        default_scopes=auth.DEFAULT_SCOPES,
        roles=users.ROLES,
        new_key=new_key,
        retention_days=retention,
        default_retention_days=_server_default(request),
        retention_days_max=RETENTION_DAYS_MAX,
        retention_error=retention_error,
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _server_default(request: Request) -> float | None:
    """The server's retention in days (`assay serve --retention-days`), None: every trace kept."""
    host = getattr(request.app.state, "host", request.app)  # the assay app the UI is mounted on
    return getattr(host.state, "retention_days", None)


@router.get("/settings")
def settings(request: Request, project_id: int) -> Response:
    return _page(request, admin(request, project_id))


async def _admin_form(request: Request, project_id: int) -> tuple[Access, Any]:
    access = await run_in_threadpool(admin, request, project_id)
    return access, await require_csrf(request, access.viewer.csrf)


@router.post("/settings/keys")
async def create_key(request: Request, project_id: int) -> Response:
    access, form = await _admin_form(request, project_id)
    scopes = [s for s in form.getlist("scopes") if isinstance(s, str)]
    expires = field(form, "expires_in_days").strip()
    name = field(form, "name").strip()
    if len(name) > 200:
        raise UiError(422, "name: at most 200 characters")
    state = state_of(request)

    def make() -> str:
        with state.transaction() as session:
            key, _row = auth.create_key(
                session,
                state.pepper,
                project_name=access.project.project_name,
                scopes=scopes,
                expires_in_days=float(expires) if expires else None,
                name=name,
            )
            return key

    try:
        key = await run_in_threadpool(make)
    except UsageError as exc:
        raise UiError(422, str(exc), "Not created") from None
    except ValueError:
        raise UiError(422, "expires_in_days: a number of days", "Not created") from None
    return await run_in_threadpool(_page, request, access, key, 201)


@router.post("/settings/keys/revoke")
async def revoke_key(request: Request, project_id: int) -> Response:
    access, form = await _admin_form(request, project_id)
    key_id = field(form, "key_id").strip()

    def revoke() -> None:
        with state_of(request).transaction() as session:
            if not KeyRepo(session, access.project_id).owns(key_id):
                raise UiError(404, f"no API key {key_id!r} in this project")
            auth.revoke(session, key_id)

    await run_in_threadpool(revoke)
    return see_other(f"{UI}/p/{project_id}/settings")


@router.post("/settings/members")
async def set_member(request: Request, project_id: int) -> Response:
    """Add an existing user to the project, or change their role."""
    access, form = await _admin_form(request, project_id)
    username = field(form, "username").strip().lower()
    role = field(form, "role")

    def save() -> None:
        with state_of(request).transaction() as session:
            user = user_by_name(session, username)
            if user is None:
                raise UiError(
                    422, f"username: no user {username!r} (create one with `assay users add`)"
                )
            if user.id == access.viewer.user_id and role != "admin":
                raise UiError(422, "role: you cannot take your own admin role away")
            try:
                users.add_member(session, user, access.project.project_name, role)
            except UsageError as exc:
                raise UiError(422, f"role: {exc}") from None

    await run_in_threadpool(save)
    return see_other(f"{UI}/p/{project_id}/settings")


@router.post("/settings/members/remove")
async def remove_member(request: Request, project_id: int) -> Response:
    access, form = await _admin_form(request, project_id)
    username = field(form, "username").strip().lower()

    def remove() -> None:
        with state_of(request).transaction() as session:
            user = user_by_name(session, username)
            if user is None:
                raise UiError(404, f"no user {username!r}")
            if user.id == access.viewer.user_id:
                raise UiError(422, "you cannot remove yourself from the project")
            # the remover is an admin and stays one: never left without
            if not MemberRepo(session, access.project_id).remove(user.id):
                raise UiError(404, f"{username} is not a member of this project")

    await run_in_threadpool(remove)
    return see_other(f"{UI}/p/{project_id}/settings")


def retention_value(text: str) -> int | None:
    """The form's retention: empty for the server's default, else whole days from 1 to
    `RETENTION_DAYS_MAX` (the API's rule); anything else a 422 naming the field."""
    text = text.strip()
    if not text:
        return None
    if not text.isascii() or not text.isdigit():
        raise UiError(
            422, f"retention_days: a whole number of days, got {text[:40]!r}", "Not saved"
        )
    days = int(text)
    if not 1 <= days <= RETENTION_DAYS_MAX:
        raise UiError(
            422, f"retention_days: from 1 to {RETENTION_DAYS_MAX} days, got {days}", "Not saved"
        )
    return days


@router.post("/settings/retention")
async def set_retention(request: Request, project_id: int) -> Response:
    """The project's retention: how many days its traces are kept (empty: the server's)."""
    access, form = await _admin_form(request, project_id)
    entered = field(form, "retention_days")
    try:
        days = retention_value(entered)
    except UiError as refused:  # the form again, with what was typed and why it was refused
        error = (refused.message, entered[:40])
        return await run_in_threadpool(_page, request, access, "", refused.status, error)

    def save() -> None:
        with state_of(request).transaction() as session:
            set_retention_days(session, access.project_id, days)

    await run_in_threadpool(save)
    return see_other(f"{UI}/p/{project_id}/settings")


__all__ = ["router"]
