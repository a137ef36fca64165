"""Signing in and out of the web UI, and its home page (the list of one's projects).

Sign-in checks a double-submitted token (a cookie and the form's field) before it looks at a
password; the session cookie is HttpOnly, SameSite=Lax, and Secure over https."""

from __future__ import annotations

import collections
import math
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.platform.server.auth import users
from assay.platform.server.ui.web import (
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


class Throttle:
    """Failed sign-ins per username, in this process: after `limit` failures within `window`
    seconds the username is refused (429) without a password check until the oldest failure
    ages out — online guessing slows to a crawl, and nobody can make the server spend an argon2
    verification per request on one account."""

    def __init__(
        self,
        limit: int = 5,
        window: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._failures: dict[str, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, username: str, now: float) -> collections.deque[float]:
        failures = self._failures.setdefault(username, collections.deque())
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures

    def wait(self, username: str) -> float:
        """Seconds until `username` may try again (0: now)."""
        now = self.clock()
        with self._lock:
            failures = self._recent(username, now)
            if len(failures) < self.limit:
                return 0.0
            return max(0.0, failures[0] + self.window - now)

    def failed(self, username: str) -> None:
        with self._lock:
            if len(self._failures) > 100_000:  # bounded: forget everyone rather than grow
                self._failures.clear()
            now = self.clock()
            self._recent(username, now).append(now)

    def succeeded(self, username: str) -> None:
        with self._lock:
            self._failures.pop(username, None)


throttle = Throttle()


@router.get("/login")
def login_page(request: Request, next: str = "") -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", login_csrf=token, next=_safe_next(next), error="")
    _set_cookie(response, request, users.LOGIN_CSRF_COOKIE, token, max_age=3600)
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    """Double-submit check (cookie = form field) before a password is looked at."""
    expected = request.cookies.get(users.LOGIN_CSRF_COOKIE, "")
    form = await require_csrf(request, expected)
    username = str(form.get("username") or "").strip().lower()[:100]
    password = str(form.get("password") or "")[:1_000]
    state = state_of(request)
    wait = throttle.wait(username)
    if wait > 0:
        response = render(
            request,
            "login.html",
            status=429,
            login_csrf=expected,
            next=_safe_next(str(form.get("next") or "")),
            error=f"too many failed sign-ins for this user: try again in {math.ceil(wait)} s",
        )
        response.headers["Retry-After"] = str(math.ceil(wait))
        return response

    def attempt() -> str | None:
        with state.transaction() as session:
            user = users.verify_login(session, username, password)
            return None if user is None else users.start_session(session, user)

    token = await run_in_threadpool(attempt)
    if token is None:
        throttle.failed(username)
        return render(
            request,
            "login.html",
            status=401,
            login_csrf=expected,
            next=_safe_next(str(form.get("next") or "")),
            error="wrong username or password",
        )
    throttle.succeeded(username)
    signed_in = see_other(_safe_next(str(form.get("next") or "")))
    _set_cookie(signed_in, request, users.SESSION_COOKIE, token, max_age=7 * 24 * 3600)
    signed_in.delete_cookie(users.LOGIN_CSRF_COOKIE, path="/")
    return signed_in


@router.post("/logout")
async def logout(request: Request) -> Response:
    viewer = await run_in_threadpool(signed_in, request)
    await require_csrf(request, viewer.csrf)
    token = request.cookies.get(users.SESSION_COOKIE, "")
    state = state_of(request)

    def end() -> None:
        with state.transaction() as session:
            users.end_session(session, token)

    await run_in_threadpool(end)
    response = see_other(UI + "/login")
    response.delete_cookie(users.SESSION_COOKIE, path="/")
    return response


@router.get("/")
def home(request: Request) -> Response:
    viewer = signed_in(request)
    if len(viewer.projects) == 1:
        only = next(iter(viewer.projects.values()))
        return see_other(f"{UI}/p/{only.project_id}/dashboard")
    return render(request, "home.html", project=None, memberships=list(viewer.projects.values()))


__all__ = ["router"]
