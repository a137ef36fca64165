"""The machinery of the web UI under /ui: Jinja2 templates (autoescaped), the vendored static
files, the security rules, who is asking. The pages are in `login.py`, `review.py`, `evaluators.py`, `traces.py`,
`experiments.py`, `datasets.py`, `dataset_files.py`, `objects.py` and `settings.py` of this
package; `mount.install(app)` mounts them all, as an app of their own, at /ui.

Security rules, enforced before any page code runs (`UiGuard`, pure ASGI):
- a request to the UI that carries an API key (`Authorization` or `X-API-Key`) is refused (401):
  keys are for the API, and the API (AuthMiddleware) reads no cookie;
- a state-changing request (anything but GET/HEAD/OPTIONS) must come from the UI's own origin:
  its `Origin` (else `Referer`) must equal the scheme and host it was sent to (403 otherwise);
- every answer carries a Content-Security-Policy with no inline script and no eval.
Then every state-changing route checks the session's CSRF token (`X-CSRF-Token` header, sent by
htmx from `hx-headers` on <body>, or the form's `csrf_token` field) with `require_csrf`.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.datastructures import Headers, MutableHeaders

from assay.platform.server.auth import users
from assay.platform.server.errors import send_response
from assay.platform.server.storage.repos import iso

log = logging.getLogger("assay.platform.server.ui")
UI = "/ui"
UI_DIR = Path(__file__).resolve().parents[2] / "ui"  # assay/platform/ui
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _short_time(value: Any) -> str:
    text = iso(value) if not isinstance(value, str) else value
    return (text or "")[:19].replace("T", " ")


templates = Environment(
    loader=FileSystemLoader(UI_DIR / "templates"),
    autoescape=True,  # every {{ }} is HTML-escaped: trace text shows as text
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters.update(pretty=_pretty, q=lambda s: quote(str(s), safe=""), when=_short_time)


class UiError(Exception):
    """A page-level refusal, shown as an HTML error page with its status; `back` is the page
    the refused action came from, linked from the error page (else the start page)."""

    def __init__(self, status: int, message: str, title: str = "", back: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.title, self.back = status, message, title, back


class LoginRequired(Exception):
    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    viewer = request.scope.get("assay.viewer")
    context = {"project": None, **context}
    body = templates.get_template(name).render(
        request=request, viewer=viewer, csrf=viewer.csrf if viewer else "", **context
    )
    return HTMLResponse(body, status_code=status)


def is_ui_path(path: str) -> bool:
    return path == "/" or path == UI or path.startswith(UI + "/")


def public_origin() -> str | None:
    """`ASSAY_PUBLIC_URL` (e.g. https://assay.example.com behind a TLS proxy) as an origin."""
    url = os.environ.get("ASSAY_PUBLIC_URL", "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def own_origin(headers: Headers, scheme: str) -> str:
    """The origin the UI is served from: `ASSAY_PUBLIC_URL` if set, else scheme and Host."""
    return public_origin() or f"{scheme}://{headers.get('host', '')}".lower()


def origin_problem(scope: Any) -> str | None:
    """Why a state-changing request is not from the UI's own origin (None: it is)."""
    headers = Headers(scope=scope)
    claimed = headers.get("origin", "").strip()
    if claimed == "null":  # a sandboxed or privacy-hidden origin: nothing to trust
        return "the request comes from an opaque origin (null)"
    if not claimed:
        referer = headers.get("referer")
        if not referer:
            return "the request names no Origin (nor Referer); it cannot be checked"
        parts = urlsplit(referer)
        claimed = f"{parts.scheme}://{parts.netloc}"
    if claimed.lower() != own_origin(headers, scope.get("scheme", "http")):
        return f"the request comes from another origin ({claimed})"
    return None


async def _send_html(send: Any, status: int, text: str) -> None:
    body = templates.get_template("error.html").render(
        request=None, viewer=None, csrf="", project=None, title="Refused", message=text
    )
    await send_response(send, status, b"text/html; charset=utf-8", body.encode(), SECURITY_HEADERS)


class UiGuard:
    """Refuses API keys and cross-origin writes on UI paths and adds the security headers."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not is_ui_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if headers.get("authorization") or headers.get("x-api-key"):
            await _send_html(
                send,
                401,
                "API keys are not accepted by the web UI: sign in at /ui/login "
                "(keys are for the API under /api/v1)",
            )
            return
        if scope["method"] not in SAFE_METHODS:
            problem = origin_problem(scope)
            if problem is not None:
                await _send_html(send, 403, f"refused: {problem}")
                return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    if name.decode() not in response_headers:
                        response_headers.append(name.decode(), value.decode())
            await send(message)

        await self.app(scope, receive, with_headers)


# -- who is asking ------------------------------------------------------------------------------
def state_of(request: Request) -> Any:
    return request.app.state.assay


def load_viewer(request: Request) -> users.Viewer | None:
    token = request.cookies.get(users.SESSION_COOKIE, "")
    if not token:
        return None
    state = state_of(request)
    with state.transaction() as session:
        return users.load_viewer(session, state.pepper, token)


def signed_in(request: Request) -> users.Viewer:
    """The signed-in person (FastAPI runs this sync dependency in a worker thread)."""
    viewer = load_viewer(request)
    if viewer is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(target)
    request.scope["assay.viewer"] = viewer
    return viewer


@dataclass(frozen=True)
class Access:
    viewer: users.Viewer
    project: users.Membership

    @property
    def project_id(self) -> int:
        return self.project.project_id


def member(request: Request, project_id: int) -> Access:
    """The viewer and their membership of the project in the path; 404 for a project they are
    not a member of (whether or not it exists)."""
    viewer = signed_in(request)
    for membership in viewer.projects.values():
        if membership.project_id == project_id:
            return Access(viewer, membership)
    raise UiError(404, f"no project {project_id} among yours", "Not found")


async def require_csrf(request: Request, expected: str) -> Any:
    """The form of a state-changing request whose CSRF token matches `expected`; 403 otherwise."""
    form = await request.form()
    given = request.headers.get("x-csrf-token") or str(form.get("csrf_token") or "")
    if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        raise UiError(403, "refused: the form's CSRF token is missing or wrong; reload the page")
    return form


def field(form: Any, name: str) -> str:
    """A text field of a submitted form, with the browser's CRLF line ends made LF again."""
    value = form.get(name)
    return "" if value is None else str(value).replace("\r\n", "\n")


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


__all__ = [
    "UI",
    "Access",
    "LoginRequired",
    "UiError",
    "UiGuard",
    "field",
    "load_viewer",
    "member",
    "render",
    "require_csrf",
    "see_other",
    "signed_in",
    "templates",
]
