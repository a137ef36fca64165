"""Fixtures of the platform tests: a real PostgreSQL started for the session (initdb as the
`postgres` user on a free loopback port), a real SQLite file, and a real uvicorn server per backend.

The server tests are parametrised over both backends. Without PostgreSQL the PostgreSQL half
FAILS (never skips) with the install line. The fixtures are package-scoped: the environment they
set (ASSAY_HOME, ASSAY_CACHE_DIR) is restored before any test outside tests/platform runs.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

PG_INSTALL = "apt-get update && apt-get install -y postgresql"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pg_bin() -> Path | None:
    for candidate in sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0,
        reverse=True,
    ):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@pytest.fixture(scope="package", autouse=True)
def assay_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private ASSAY_HOME and response cache for the platform tests (pepper files, default database)."""
    home = tmp_path_factory.mktemp("assay-home")
    saved = {
        name: os.environ.get(name)
        for name in (
            "ASSAY_HOME",
            "ASSAY_SECRET_KEY",
            "ASSAY_DB_URL",
            "ASSAY_API_KEY",
            "RAGMETRICS_API_KEY",
            "ASSAY_BASE_URL",
            "ASSAY_CACHE_DIR",
        )
    }
    for name in saved:
        os.environ.pop(name, None)
    os.environ["ASSAY_HOME"] = str(home)
    os.environ["ASSAY_CACHE_DIR"] = str(home / "cache")  # the model layer's response cache
    yield home
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="package")
def pg_url() -> Iterator[str]:
    bindir = pg_bin()
    if bindir is None:
        pytest.fail(
            f"PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin): {PG_INSTALL}",
            pytrace=False,
        )
    base = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    data, log = base / "data", base / "server.log"
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the server as the postgres user
        import pwd

        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail(f"PostgreSQL's `postgres` user is missing: {PG_INSTALL}", pytrace=False)
        os.chown(base, owner.pw_uid, owner.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*run_as, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(args)} failed: {done.stderr or done.stdout}", pytrace=False)

    run(
        str(bindir / "initdb"),
        "-D",
        str(data),
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
    )
    options = (
        f"-p {port} -c listen_addresses=127.0.0.1 -k {base} -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=100"
    )
    run(
        str(bindir / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(log),
        "-w",
        "-t",
        "60",
        "-o",
        options,
        "start",
    )
    try:
        run(
            str(bindir / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "postgres",
            "assay_test",
        )
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/assay_test"
    finally:
        subprocess.run(
            [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="package")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'assay.sqlite'}"


@dataclass
class LiveServer:
    """A real uvicorn serving the app on 127.0.0.1, and helpers to make keys in its database."""

    backend: str
    db_url: str
    app: Any
    base_url: str
    _server: Any = None
    _thread: threading.Thread | None = None
    projects: list[str] = field(default_factory=list)

    def key(
        self,
        project: str | None = None,
        *,
        scopes: tuple[str, ...] = ("ingest", "read", "write"),
        expires_in_days: float | None = None,
    ) -> str:
        from assay.platform.server.auth import keys as auth

        state = self.app.state.assay
        with state.transaction() as session:
            key, _row = auth.create_key(
                session,
                state.pepper,
                project_name=project or self.new_project(),
                scopes=scopes,
                expires_in_days=expires_in_days,
            )
        return key

    def new_project(self) -> str:
        name = f"p-{uuid.uuid4().hex[:12]}"
        self.projects.append(name)
        return name

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url + "/api/v1", headers=headers, timeout=30)


def start_server(backend: str, db_url: str, **options: Any) -> LiveServer:
    """The app on `db_url` served by uvicorn in a thread; `options` go to `create_app` (e.g.
    `experiment_workers`, or `worker_options` in place of the quick heartbeat below)."""
    import uvicorn

    from assay.platform.server.app import create_app

    settings: dict[str, Any] = {
        "worker": True,
        "worker_options": {"poll_interval": 0.1, "heartbeat_interval": 0.2, "stale_after": 2.0},
    }
    app = create_app(db_url, **(settings | options))
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP
    # (with proto 0, Nagle and delayed ACKs cost 40 ms a request)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{backend}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    return LiveServer(backend, db_url, app, f"http://127.0.0.1:{port}", server, thread)


def stop_server(live: LiveServer) -> None:
    live._server.should_exit = True
    if live._thread is not None:
        live._thread.join(timeout=15)
    live.app.state.assay.engine.dispose()


@pytest.fixture(scope="package", params=["sqlite", "postgresql"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """The server on each backend (one per backend; each test makes its own projects)."""
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    server = start_server(request.param, url)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def fake() -> Iterator[Any]:
    """The loopback fake OpenAI-compatible server (generation and judging)."""
    from tests.models.fake_openai import serve

    yield from serve()


@pytest.fixture
def sdk(live: LiveServer) -> Iterator[Any]:
    """The SDK logged in to `live` with a fresh project's key."""
    import assay.platform as ragmetrics

    key = live.key()
    assert ragmetrics.login(key, base_url=live.base_url) is True
    yield ragmetrics


@pytest.fixture
def many_capitals(fake: Any) -> Any:
    """Makes, in the logged-in project, the objects of a long experiment and returns them as
    `Experiment` keyword arguments: 20 questions (5 rounds of 4 capitals) × 2 cohorts ("Smart",
    whose system prompt makes the fake name the capital, and "Plain") × 3 criteria (2 judged by
    the fake, 1 function) = 40 traces and 120 cells. Names, questions and model strings carry a
    tag unique to the call, so no earlier answer is in the response cache. Call it after login."""
    from assay.platform import Cohort, Dataset, Example
    from tests.platform.test_experiments import CAPITALS, seed_objects

    def make() -> dict[str, Any]:
        tag = uuid.uuid4().hex[:8]
        _dataset, task, criteria = seed_objects(fake, f"-{tag}")
        dataset = Dataset(
            name=f"Many capitals {tag}",
            examples=[
                Example(
                    f"What is the capital of {country}? ({tag} {i})",
                    f"The capital of {country} is {capital}.",
                    capital,
                )
                for i in range(5)
                for country, capital in CAPITALS.items()
            ],
        )
        dataset.save()
        cohorts = [
            Cohort(
                name="Smart",
                generator_model=fake.model_string(f"gen-{tag}-a"),
                system_prompt="You are smart.",
            ),
            Cohort(name="Plain", generator_model=fake.model_string(f"gen-{tag}-b")),
        ]
        return {
            "dataset": dataset,
            "task": task,
            "cohorts": cohorts,
            "criteria": criteria,
            "judge_model": fake.model_string(f"judge-{tag}"),
        }

    return make
