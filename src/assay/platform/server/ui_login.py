"""Signing in and out of the web UI, and its home page (the list of one's projects).

Sign-in checks a double-submitted token (a cookie and the form's field) before it looks at a
password; the session cookie is HttpOnly, SameSite=Lax, and Secure over https."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.platform.server import ui_auth
from assay.platform.server.ui_web import (
    UI,
    public_origin,
    render,
    require_csrf,
    see_other,
    signed_in,
    state_of,
)

router = APIRouter()


def _set_cookie(response: Response, request: Request, name: str, value: str, **extra: Any) -> None:
    response.set_cookie(
        name,
        value,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https" or (public_origin() or "").startswith("https:"),
        path="/",
        **extra,
    )


def _safe_next(target: str | None) -> str:
    """Only a path of this UI (never another site) to go to after signing in."""
    if target and target.startswith(UI + "/") and not target.startswith("//"):
        return target
    return UI + "/"


@router.get("/login")
def login_page(request: Request, next: str = "") -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", login_csrf=token, next=_safe_next(next), error="")
    _set_cookie(response, request, ui_auth.LOGIN_CSRF_COOKIE, token, max_age=3600)
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    """Double-submit check (cookie = form field) before a password is looked at."""
    expected = request.cookies.get(ui_auth.LOGIN_CSRF_COOKIE, "")
    form = await require_csrf(request, expected)
    username = str(form.get("username") or "").strip().lower()[:100]
    password = str(form.get("password") or "")[:1_000]
    state = state_of(request)

    def attempt() -> str | None:
        with state.transaction() as session:
            user = ui_auth.verify_login(session, username, password)
            return None if user is None else ui_auth.start_session(session, user)

    token = await run_in_threadpool(attempt)
    if token is None:
        response = render(
            request,
            "login.html",
            status=401,
            login_csrf=expected,
            next=_safe_next(str(form.get("next") or "")),
            error="wrong username or password",
        )
        return response
    response = see_other(_safe_next(str(form.get("next") or "")))
    _set_cookie(response, request, ui_auth.SESSION_COOKIE, token, max_age=7 * 24 * 3600)
    response.delete_cookie(ui_auth.LOGIN_CSRF_COOKIE, path="/")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    viewer = await run_in_threadpool(signed_in, request)
    await require_csrf(request, viewer.csrf)
    token = request.cookies.get(ui_auth.SESSION_COOKIE, "")
    state = state_of(request)

    def end() -> None:
        with state.transaction() as session:
            ui_auth.end_session(session, token)

    await run_in_threadpool(end)
    response = see_other(UI + "/login")
    response.delete_cookie(ui_auth.SESSION_COOKIE, path="/")
    return response


@router.get("/")
def home(request: Request) -> Response:
    viewer = signed_in(request)
    if len(viewer.projects) == 1:
        only = next(iter(viewer.projects.values()))
        return see_other(f"{UI}/p/{only.project_id}/queues")
    return render(request, "home.html", project=None, memberships=list(viewer.projects.values()))


__all__ = ["router"]
