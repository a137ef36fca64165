"""Fixtures of the web UI tests: users signed in over plain HTTP (httpx) against the live servers of
tests/platform/conftest.py, and, for the browser tests, Debian's chromium driven by Playwright
against a live uvicorn on 127.0.0.1 (SQLite)."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.platform.conftest import LiveServer, start_server, stop_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class UiUser:
    live: LiveServer
    project: str
    project_id: int
    username: str
    password: str
    key: str

    @property
    def base(self) -> str:
        return f"/ui/p/{self.project_id}"

    def api(self) -> httpx.Client:
        return self.live.client(self.key)


# one reviewer per server, made a member of each new project: argon2 costs ~0.3 s a hash here
_SHARED: dict[str, tuple[str, str]] = {}
_CLIENTS: dict[tuple[str, str], httpx.Client] = {}


def make_user(
    live: LiveServer,
    project: str | None = None,
    *,
    name: str | None = None,
    role: str = "member",
    fresh: bool = False,
) -> UiUser:
    """A member of `project` (a new one by default), with an API key of it: the server's shared
    reviewer, or (`fresh`, or a `name`) a user of its own."""
    from sqlalchemy import select

    from assay.platform.server.auth import users as ui_auth
    from assay.platform.server.storage import models

    project = project or live.new_project()
    key = live.key(project)
    shared = not fresh and name is None and role == "member"
    with live.app.state.assay.transaction() as session:
        if shared and live.base_url in _SHARED:
            username, password = _SHARED[live.base_url]
            user = session.scalar(select(models.User).where(models.User.username == username))
            ui_auth.add_member(session, user, project, role)
        else:
            username = name or f"rev-{uuid.uuid4().hex[:8]}"
            password = secrets.token_urlsafe(12)
            ui_auth.create_user(session, username, password, projects=[project], role=role)
            if shared:
                _SHARED[live.base_url] = (username, password)
        project_id = session.scalar(select(models.Project.id).where(models.Project.name == project))
    return UiUser(live, project, project_id, username, password, key)


def csrf_in(html: str) -> str:
    found = _CSRF.search(html)
    assert found, "the page has no csrf_token field"
    return found.group(1)


def sign_in(user: UiUser) -> httpx.Client:
    """An httpx client holding a session cookie of `user` (Origin set as a browser would); one
    per user and server, signed in once."""
    base = user.live.base_url
    if (base, user.username) in _CLIENTS:
        return _CLIENTS[(base, user.username)]
    client = httpx.Client(base_url=base, timeout=30, headers={"Origin": base})
    page = client.get("/ui/login")
    answer = client.post(
        "/ui/login",
        data={
            "csrf_token": csrf_in(page.text),
            "username": user.username,
            "password": user.password,
            "next": "/ui/",
        },
    )
    assert answer.status_code == 303, answer.text
    _CLIENTS[(base, user.username)] = client
    return client


def ingest(user: UiUser, *traces: dict[str, Any]) -> list[str]:
    """Send traces through the API; returns their ids."""
    sent = [{"id": str(uuid.uuid4()), **t} for t in traces]
    answer = user.api().post("/traces", json={"traces": sent})
    assert answer.status_code == 202, answer.text
    return [t["id"] for t in sent]


def five_point_criterion(user: UiUser, name: str = "Helpfulness") -> None:
    answer = user.api().post(
        "/criteria",
        json={
            "name": name,
            "criteria_type": "llm_judge",
            "output_type": "5-point",
            "header": "How helpful is the answer?",
            **{f"likert_score_{i}": f"level {i}" for i in range(1, 6)},
        },
    )
    assert answer.status_code == 201, answer.text


@pytest.fixture(scope="package")
def ui_live(sqlite_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own for the browser tests (SQLite)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('ui-sqlite') / 'ui.sqlite'}"
    server = start_server("sqlite", url)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


def browser_sign_in(browser: Any, user: UiUser, **context_options: Any) -> Any:
    """A new browser page signed in as `user` (through the real login form)."""
    context = browser.new_context(base_url=user.live.base_url, **context_options)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/ui/login")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", user.password)
    page.click("button[type=submit]")
    page.wait_for_url(
        re.compile(r".*/ui/(p/\d+/dashboard)?$")
    )  # a project's dashboard, or the list
    return page
