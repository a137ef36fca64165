"""Mounting the web UI on the assay app (`install(app)`): an app of its own at /ui with every page
router of this package, the static files and HTML error pages, `/` sending browsers there, and
the guard (`web.UiGuard`) in front of both. The app factory calls it; page modules never import it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.staticfiles import StaticFiles

from assay.platform.server.errors import ApiError
from assay.platform.server.ui import (
    dashboard,
    dataset_files,
    datasets,
    evaluators,
    experiments,
    login,
    objects,
    review,
    review_sessions,
    sessions,
    settings,
    trace_actions,
    traces,
    trust,
)
from assay.platform.server.ui.web import (
    SAFE_METHODS,
    UI,
    UI_DIR,
    LoginRequired,
    UiError,
    UiGuard,
    load_viewer,
    log,
    render,
    see_other,
)

_E = TypeVar("_E", bound=Exception)


def _handle(
    app: FastAPI, kind: type[_E], handler: Callable[[Request, _E], Awaitable[Response]]
) -> None:
    """`app.add_exception_handler`, typed: Starlette's signature wants a handler of any
    Exception, though it only ever hands the handler an exception of `kind`."""
    app.add_exception_handler(
        kind, cast(Callable[[Request, Exception], Awaitable[Response]], handler)
    )


def _project_of(request: Request) -> Any:
    """The signed-in viewer's membership of the project in the path (/ui/p/{id}/...), if any."""
    found = re.match(r"^/ui/p/(\d+)(?:/|$)", request.url.path)
    if found is None:
        return None
    viewer = request.scope.get("assay.viewer")
    if viewer is None and request.method in SAFE_METHODS:  # no page code ran: an unknown path
        viewer = load_viewer(request)
        request.scope["assay.viewer"] = viewer  # render() shows the header of whoever it is
    if viewer is None:
        return None
    wanted = int(found.group(1))
    return next((m for m in viewer.projects.values() if m.project_id == wanted), None)


def install(app: FastAPI) -> None:
    """Mount the UI on the assay app: a FastAPI app of its own at /ui (its routes, static files
    and HTML error pages; the API's JSON errors and route list stay the API's), `/` sending
    browsers there, and the guard in front of both."""

    ui = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    ui.state.assay = app.state.assay
    ui.state.host = app  # its state.worker (set by the app's lifespan), for the Cancel button
    ui.mount("/static", StaticFiles(directory=UI_DIR / "static"), name="static")
    for module_router in (
        login.router,
        dashboard.router,
        review.router,
        review_sessions.router,
        evaluators.router,
        traces.router,
        trace_actions.router,
        sessions.router,
        experiments.router,
        datasets.router,
        dataset_files.router,
        settings.router,
        trust.router,
        objects.router,
    ):
        ui.include_router(module_router)

    def error_page(
        request: Request, status: int, message: str, title: str = "", back: str = ""
    ) -> HTMLResponse:
        return render(
            request,
            "error.html",
            status=status,
            title=title or {404: "Not found", 409: "Conflict"}.get(status, "Error"),
            message=message,
            back=back,
            project=_project_of(request),  # the navigation stays on an error page
        )

    async def ui_error(request: Request, exc: UiError) -> HTMLResponse:
        return error_page(request, exc.status, exc.message, exc.title, exc.back)

    async def login_required(request: Request, exc: LoginRequired) -> Response:
        if request.method in SAFE_METHODS:
            return see_other(f"{UI}/login?next={quote(exc.next_path, safe='')}")
        return error_page(request, 401, "your session ended: sign in again", "Signed out")

    async def api_error(request: Request, exc: ApiError) -> HTMLResponse:
        return error_page(request, exc.status, exc.message)

    async def http_error(request: Request, exc: StarletteHTTPException) -> HTMLResponse:
        detail = exc.detail if exc.status_code != 404 else "no such page"
        return error_page(request, exc.status_code, str(detail))

    async def malformed(request: Request, exc: RequestValidationError) -> HTMLResponse:
        problem = (exc.errors() or [{}])[0]
        where = ".".join(str(p) for p in problem.get("loc", ())[1:]) or "request"
        return error_page(request, 422, f"{where}: {problem.get('msg', 'invalid')}")

    async def crash(request: Request, exc: Exception) -> HTMLResponse:
        log.exception("unhandled error in the web UI")
        return error_page(request, 500, f"internal server error ({type(exc).__name__})")

    _handle(ui, UiError, ui_error)
    _handle(ui, LoginRequired, login_required)
    _handle(ui, ApiError, api_error)
    _handle(ui, StarletteHTTPException, http_error)
    _handle(ui, RequestValidationError, malformed)
    _handle(ui, Exception, crash)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return see_other(UI + "/")

    app.mount(UI, ui, name="ui")
    app.add_middleware(UiGuard)


__all__ = ["install"]
