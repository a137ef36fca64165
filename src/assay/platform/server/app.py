"""The app factory: `create_app(db_url)` migrates the database and returns the FastAPI app.

Every request under /api/ except `/api/v1/health` passes the key check first (pure ASGI, before
any body is read or parsed), then the key's rate limit when one is set (429 with Retry-After; see
rate_limit.py), then the body cap (Content-Length over the cap, or a streamed body that grows past
it: 413). The JSON API's cap is 1 MB (the SDK splits its requests under it); an OTLP export may be
up to `--max-request-mb` (32 MB by default, config.max_request_bytes), since the official
exporters send 512 spans a request whatever their size. The SDK's trace ingest
(`POST /api/v1/traces`) may come gzip-compressed: 1 MB on the wire, unpacked up to
`--max-request-mb` (`Unpack`). Every error is
`{"error": {"code", "message", "field"?, "existing_id"?}}`.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException

from assay._version import __version__
from assay.platform.server.api import (
    dashboard,
    evaluators,
    experiment_control,
    pipelines,
    project,
    resources,
    review,
    scores,
    sessions,
    traces,
)
from assay.platform.server.config import (
    MAX_REQUEST_HINT,
    max_request_bytes,
    pepper,
    rate_limit_setting,
    resolve_db_url,
)
from assay.platform.server.errors import ApiError, send_error
from assay.platform.server.jobs.retention import Retention
from assay.platform.server.jobs.retention import retention_days as retention_days_setting
from assay.platform.server.jobs.workers import Workers
from assay.platform.server.jobs.workers import experiment_workers as experiment_workers_setting
from assay.platform.server.otlp import ingest as otlp_ingest
from assay.platform.server.rate_limit import RateLimitMiddleware, parse_rate_limit
from assay.platform.server.state import ServerState
from assay.platform.server.storage.db import make_engine, migrate
from assay.platform.server.ui import mount as ui_mount

log = logging.getLogger("assay.platform.server")

API = "/api/v1"
PUBLIC_PATHS = frozenset({f"{API}/health"})
GZIP_PATHS = frozenset({f"{API}/traces"})  # the SDK's trace ingest takes gzip bodies (Unpack)
DEFAULT_MAX_BODY = 1_000_000


class AuthMiddleware:
    """Rejects with 401, before anything else runs, a request under /api/ without a valid key."""

    def __init__(self, app: Any, state: ServerState) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] != "http"
            or not scope["path"].startswith("/api/")
            or scope["path"] in PUBLIC_PATHS
        ):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        value = headers.get("authorization", "")
        token = (
            value[7:].strip()
            if value[:7].lower() == "bearer "
            else headers.get("x-api-key", "").strip()
        )
        challenge = [(b"www-authenticate", b'Bearer realm="assay"')]
        if not token:
            await send_error(
                send,
                401,
                "unauthorized",
                "missing API key: send `Authorization: Bearer assay_…` "
                "(create one with `assay keys create`)",
                challenge,
            )
            return
        result = await run_in_threadpool(self.state.authenticate, token)
        if isinstance(result, ApiError):
            await send_error(send, result.status, result.code, result.message)
            return
        if isinstance(result, str):
            await send_error(send, 401, "unauthorized", result, challenge)
            return
        scope["assay.principal"] = result
        await self.app(scope, receive, send)


def too_large_message(size: int | None, limit: int, *, otlp: bool) -> str:
    """What a 413 says: the size when known, the limit, and for OTLP how to raise it."""
    said = f"the request body is {size} bytes" if size is not None else "the request body is"
    if otlp:
        return (
            f"{said}{'' if size is not None else ' over'}; the limit of an OTLP export is "
            f"{limit / 1_000_000:g} MB ({MAX_REQUEST_HINT})"
        )
    return f"{said}; the limit is {limit}" if size is not None else f"{said} over {limit} bytes"


class BodyLimit:
    """413 for a body over the limit: by its Content-Length, or as soon as a streamed body passes
    it. OTLP exports (`otlp_path`) have their own, larger limit."""

    def __init__(self, app: Any, limit: int, *, otlp_limit: int | None = None) -> None:
        self.app, self.limit = app, limit
        self.otlp_limit = otlp_limit if otlp_limit is not None else limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        otlp = scope["path"] == otlp_ingest.PATH
        limit = self.otlp_limit if otlp else self.limit
        length = Headers(scope=scope).get("content-length")
        if length is not None:
            if not length.isdigit():
                await send_error(send, 400, "bad_request", "Content-Length is not a number")
                return
            if int(length) > limit:
                message = too_large_message(int(length), limit, otlp=otlp)
                await send_error(send, 413, "too_large", message)
                return
        received = 0

        async def limited() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise StarletteHTTPException(413, too_large_message(None, limit, otlp=otlp))
            return message

        await self.app(scope, limited, send)


class Unpack:
    """A gzip-compressed body (`Content-Encoding: gzip`) of `paths` (the SDK's trace ingest)
    unpacked before the route reads it as JSON. Inside `BodyLimit`, so the body on the wire keeps
    the API's cap; unpacked it may reach `limit` (the server's `max_request`, as an OTLP export
    may): past it a 413 naming the limit, a corrupt or cut-off body a 400, an encoding other than
    gzip a 415. Other requests pass untouched."""

    def __init__(self, app: Any, *, paths: frozenset[str], limit: int) -> None:
        self.app, self.paths, self.limit = app, paths, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        encoding = Headers(scope=scope).get("content-encoding", "").strip().lower()
        if encoding in ("", "identity"):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            try:
                message = await receive()
            except StarletteHTTPException as exc:  # BodyLimit: past the cap on the wire
                await send_error(send, exc.status_code, "too_large", str(exc.detail))
                return
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        try:
            data = otlp_ingest.decompress(b"".join(chunks), encoding, self.limit)
        except ApiError as exc:
            message_text = exc.message
            if exc.status == 413:
                message_text = (
                    f"the body unpacks to over {self.limit / 1_000_000:g} MB, the limit of an "
                    f"unpacked request ({MAX_REQUEST_HINT})"
                )
            await send_error(send, exc.status, exc.code, message_text)
            return
        headers = [
            (name, value)
            for name, value in scope["headers"]
            if name.lower() not in (b"content-encoding", b"content-length")
        ]
        headers.append((b"content-length", str(len(data)).encode()))
        sent = False

        async def unpacked() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app({**scope, "headers": headers}, unpacked, send)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "body"


_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    422: "validation_error",
    429: "rate_limited",
}


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "field": _field(e.get("loc", ())),
                "message": str(e.get("msg", "invalid")).removeprefix("Value error, "),
                "type": str(e.get("type", "")),
            }
            for e in exc.errors()
        ]
        first = problems[0] if problems else {"field": "body", "message": "invalid request"}
        if first.get("type") == "json_invalid":
            first = {"field": "body", "message": "the body is not valid JSON"}
        message = f"{first['field']}: {first['message']}"
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more)"
        return JSONResponse(
            {
                "error": {
                    "code": "validation_error",
                    "message": message,
                    "field": first["field"],
                    "problems": problems[:20],
                }
            },
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _CODES.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404 and detail == "Not Found":
            detail = "no such route"
        return JSONResponse(
            {"error": {"code": code, "message": detail}},
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _crash(_request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return JSONResponse(
            {
                "error": {
                    "code": "internal",
                    "message": f"internal server error ({type(exc).__name__})",
                }
            },
            status_code=500,
        )


def create_app(
    db_url: str | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    run_migrations: bool = True,
    worker: bool = False,
    worker_options: dict[str, Any] | None = None,
    experiment_workers: int | None = None,
    rate_limit: str | None = None,
    rate_limit_burst: int | None = None,
    max_request_mb: float | None = None,
    retention_days: float | None = None,
    retention_options: dict[str, Any] | None = None,
) -> FastAPI:
    """The assay server for the database at `db_url` (default: the embedded SQLite file).

    `worker=True` runs the job workers in threads while the app is served (started and stopped
    with the app's lifespan), as `assay serve` does: `experiment_workers` (default
    `ASSAY_EXPERIMENT_WORKERS`, else 1) for experiments and one for review-queue judging and
    online evaluation (`jobs/workers.py`). `rate_limit` ("20/s", "600/min", "off";
    default `ASSAY_RATE_LIMIT`, else off) limits each API key (rate_limit.py). `max_request_mb`
    (default `ASSAY_MAX_REQUEST_MB`, else 32) bounds an OTLP export before and after gzip.
    `retention_days` (default `ASSAY_RETENTION_DAYS`, else none) deletes traces older than that
    many days, in batches, in a thread beside the worker (`jobs/retention.py`); a project with a
    horizon of its own (`PATCH /api/v1/project/settings`) keeps its traces that long instead."""
    limit = parse_rate_limit(**rate_limit_setting(rate_limit, rate_limit_burst))
    url = resolve_db_url(db_url)
    engine = make_engine(url)
    if run_migrations:
        migrate(engine)
    state = ServerState(
        engine, pepper(url), max_body_bytes, max_request=max_request_bytes(max_request_mb)
    )

    days = retention_days_setting(retention_days)
    pool = experiment_workers_setting(experiment_workers) if worker else 0

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        options = worker_options or {}
        running = Workers(state, experiment_workers=pool, **options).start() if worker else None
        app.state.worker = running
        # always: a project's admins may give it a horizon of its own (`projects.retention_days`)
        pruning = Retention(state, days, **(retention_options or {})).start()
        app.state.retention = pruning
        try:
            yield
        finally:
            await run_in_threadpool(pruning.stop)
            if running is not None:
                await run_in_threadpool(running.stop)

    app = FastAPI(
        title="assay",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=f"{API}/openapi.json",
        lifespan=lifespan,
    )
    app.state.assay = state
    app.state.worker = None
    app.state.retention = None
    app.state.retention_days = days
    app.state.experiment_workers = pool  # for the banner: 0 when the app runs no workers
    _install_handlers(app)
    app.router.routes.extend(resources.router.routes)  # flat, so `app.routes` lists every route
    for module in (
        experiment_control,
        dashboard,
        traces,
        sessions,
        scores,
        review,
        pipelines,
        evaluators,
        project,
        otlp_ingest,
    ):
        app.router.routes.extend(module.router.routes)
    ui_mount.install(app)  # the web UI under /ui: its routes, static files, error pages and guard
    app.state.rate_limit = limit
    # innermost: runs last
    app.add_middleware(Unpack, paths=GZIP_PATHS, limit=state.max_request)
    app.add_middleware(BodyLimit, limit=max_body_bytes, otlp_limit=state.max_request)
    if limit is not None:
        app.add_middleware(RateLimitMiddleware, limit=limit)
    app.add_middleware(AuthMiddleware, state=state)  # outermost: runs first
    return app


__all__ = ["API", "AuthMiddleware", "BodyLimit", "ServerState", "Unpack", "create_app"]
