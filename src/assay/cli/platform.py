"""`assay serve` and `assay keys create|list|revoke`: the self-hosted platform server."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer
from rich.console import Console

keys_app = typer.Typer(help="Manage the API keys of the assay server.", no_args_is_help=True)
_err = Console(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL (default: $ASSAY_DB_URL, else the SQLite "
        "file ~/.assay/assay.sqlite under $ASSAY_HOME).",
    ),
]


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8321,
    db: DbOption = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Seed a demo project and print its sign-in.")
    ] = False,
    rate_limit: Annotated[
        str | None,
        typer.Option(
            "--rate-limit",
            help="Requests per API key, as N/s, N/min or N/h (default: $ASSAY_RATE_LIMIT, "
            "else off); over it the API answers 429 with Retry-After.",
        ),
    ] = None,
    rate_limit_burst: Annotated[
        int | None,
        typer.Option(
            "--rate-limit-burst",
            min=1,
            help="Requests a key may send at once before the rate applies (default: one "
            "second's worth; $ASSAY_RATE_LIMIT_BURST).",
        ),
    ] = None,
    max_request_mb: Annotated[
        float | None,
        typer.Option(
            "--max-request-mb",
            help="Largest OTLP export accepted, in MB, before and after gzip (default: "
            "$ASSAY_MAX_REQUEST_MB, else 32); a larger one is answered 413.",
        ),
    ] = None,
    retention_days: Annotated[
        float | None,
        typer.Option(
            "--retention-days",
            help="Delete logged traces older than this many days (with their scores, labels "
            "and dashboard rollups), in batches that never hold up ingest (default: "
            "$ASSAY_RETENTION_DAYS, else keep every trace). A project whose admins set a "
            "retention of its own (Settings page, PATCH /api/v1/project/settings) keeps that.",
        ),
    ] = None,
    experiment_workers: Annotated[
        int | None,
        typer.Option(
            "--experiment-workers",
            min=1,
            max=32,
            help="Experiments run at once, each on a worker of its own (default: "
            "$ASSAY_EXPERIMENT_WORKERS, else 1). Online evaluators and review-queue judges have "
            "a worker of their own beside them, so an experiment never holds up their scoring.",
        ),
    ] = None,
) -> None:
    """Run the platform server (web UI under /ui, API under /api/v1) on HOST:PORT, with its job
    workers: one for experiments (more with --experiment-workers) and one that scores traces for
    online evaluators and review queues. SIGTERM or Ctrl-C stops it within a few seconds: a running
    experiment is interrupted and handed back to the queue, and resumes where it stopped."""
    from assay._util.deps import require

    uvicorn = require("uvicorn", extra="platform", feature="assay serve")
    from assay.platform.server.app import create_app
    from assay.platform.server.config import resolve_db_url

    url = resolve_db_url(db)
    _check_port(host, port)  # before the migrations and the demo: a taken port says so at once
    app = create_app(
        url,
        worker=True,
        rate_limit=rate_limit,
        rate_limit_burst=rate_limit_burst,
        max_request_mb=max_request_mb,
        retention_days=retention_days,
        experiment_workers=experiment_workers,
    )
    shown = url.split("@", 1)[-1] if "@" in url else url
    if demo:
        from assay.platform.server.ui.demo import seed_demo_sign_in

        shown_demo = seed_demo_sign_in(app.state.assay)
        if shown_demo.note:
            _err.print(f"demo: {shown_demo.note}", highlight=False, soft_wrap=True)
        _err.print(
            f"demo project {shown_demo.project!r} ready: sign in at http://{host}:{port}/ui/ as "
            f"{shown_demo.username} / {shown_demo.password}",
            highlight=False,
            soft_wrap=True,  # one line, whatever the terminal's width: the password stays whole
        )
    base = f"http://{host}:{port}"
    _err.print(
        f"assay server on {base} (database {shown}); stop with Ctrl-C\n"
        f"  web UI   {base}/ui/   (a person to sign in: assay users add NAME --project P)\n"
        f"  API      {base}/api/v1   (a key: assay keys create --project P)\n"
        f"  OTLP     {base}/otlp/v1/traces",
        highlight=False,
        soft_wrap=True,
    )
    if app.state.experiment_workers > 1:
        _err.print(f"experiments: {app.state.experiment_workers} run at once", highlight=False)
    if app.state.rate_limit is not None:
        _err.print(f"rate limit: {app.state.rate_limit.describe()}", highlight=False)
    if app.state.retention_days:
        _err.print(
            f"retention: traces older than {app.state.retention_days:g} days are deleted "
            "(unless a project has its own)",
            highlight=False,
        )
    # a request still running after SIGTERM gets this long before uvicorn closes it, so the
    # stop is bounded even with a client holding a slow request open
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)


def _check_port(host: str, port: int) -> None:
    """A `UsageError` (one line) when HOST:PORT cannot be listened on, e.g. another server has it."""
    import socket

    from assay.errors import UsageError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"--host {host!r} cannot be resolved: {exc}") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}): another server may "
                "have it; choose another with --port"
            ) from None


def worker_command(
    db: DbOption = None,
    poll_interval: Annotated[
        float, typer.Option(help="Seconds between looks for new jobs.", min=0.05)
    ] = 1.0,
    kinds: Annotated[
        str,
        typer.Option(
            "--kinds",
            help="Which jobs to take, comma-separated: experiments, scoring (online_eval and "
            "review_judge), or single kinds (experiment, online_eval, review_judge); default all.",
        ),
    ] = "all",
    experiment_workers: Annotated[
        int | None,
        typer.Option(
            "--experiment-workers",
            min=1,
            max=32,
            help="Experiments this process runs at once (default: $ASSAY_EXPERIMENT_WORKERS, "
            "else 1).",
        ),
    ] = None,
) -> None:
    """Run more job workers on the database, beside `assay serve` (PostgreSQL: as many as you
    like): by default one for experiments and one for online evaluators and review-queue judges."""
    import signal
    import threading

    from assay.platform.server.config import pepper, resolve_db_url
    from assay.platform.server.jobs.workers import Workers, parse_kinds
    from assay.platform.server.jobs.workers import experiment_workers as experiment_workers_setting
    from assay.platform.server.state import ServerState
    from assay.platform.server.storage.db import make_engine, migrate

    taken = parse_kinds(kinds)  # a bad option is refused before the database is touched
    many = experiment_workers_setting(experiment_workers)
    url = resolve_db_url(db)
    engine = make_engine(url)
    migrate(engine)
    state = ServerState(engine, pepper(url), 0)
    workers = Workers(state, experiment_workers=many, kinds=taken, poll_interval=poll_interval)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    workers.start()
    _err.print(
        f"assay worker {workers.name} running ({workers.describe()}); stop with Ctrl-C",
        highlight=False,
        soft_wrap=True,  # one line, whatever the terminal's width
    )
    done.wait()
    workers.stop()
    engine.dispose()


def _scopes(values: list[str] | None) -> list[str]:
    from assay.platform.server.auth.keys import DEFAULT_SCOPES

    if not values:
        return list(DEFAULT_SCOPES)
    return [part for value in values for part in value.replace(",", " ").split()]


@keys_app.command("create")
def create_command(
    db: DbOption = None,
    project: Annotated[
        str, typer.Option(help="Project the key belongs to (created if new).")
    ] = "default",
    scopes: Annotated[
        list[str] | None,
        typer.Option(
            "--scopes",
            help="ingest, read, write, admin (repeat or "
            "comma-separate; default ingest,read,write).",
        ),
    ] = None,
    expires_in: Annotated[
        float | None, typer.Option("--expires-in", help="Days until the key expires.")
    ] = None,
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
) -> None:
    """Create an API key and print it (its only line on stdout; it is not shown again)."""
    from assay.platform.server.auth.admin import create_key

    key = create_key(
        db, project=project, scopes=_scopes(scopes), expires_in_days=expires_in, name=name
    )
    sys.stdout.write(key + "\n")


@keys_app.command("list")
def list_command(
    db: DbOption = None,
    project: Annotated[Optional[str], typer.Option(help="Only this project's keys.")] = None,  # noqa: UP045
) -> None:
    """List API keys (ids, never secrets)."""
    from assay.platform.server.auth.admin import list_keys

    rows = [("KEY ID", "PROJECT", "SCOPES", "CREATED", "EXPIRES", "REVOKED", "NAME")]
    for key in list_keys(db, project=project):
        rows.append(
            (
                key["key_id"],
                key["project"],
                ",".join(key["scopes"]),
                _day(key["created_at"]),
                _day(key["expires_at"]) or "never",
                _day(key["revoked_at"]),
                key["name"],
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        sys.stdout.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            + "\n"
        )


def _day(moment: str | None) -> str:
    return (moment or "")[:16].replace("T", " ")


@keys_app.command("revoke")
def revoke_command(
    key_id: Annotated[
        str, typer.Argument(help="The key id (from `assay keys list`) or the whole key.")
    ],
    db: DbOption = None,
) -> None:
    """Revoke an API key: it stops working at once."""
    from assay.platform.server.auth.admin import revoke_key

    _err.print(f"revoked {revoke_key(db, key_id)}", highlight=False)


users_app = typer.Typer(help="Manage the people who sign in to the web UI.", no_args_is_help=True)


@users_app.command("add")
def add_user_command(
    username: Annotated[str, typer.Argument(help="Lower-case letters, digits and . _ @ -")],
    db: DbOption = None,
    project: Annotated[
        list[str] | None,
        typer.Option("--project", help="A project the user belongs to (repeat; default: default)."),
    ] = None,
    role: Annotated[str, typer.Option(help="member or admin.")] = "member",
    display_name: Annotated[str, typer.Option("--name", help="The name the UI shows.")] = "",
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
) -> None:
    """Create a web UI user (the password is asked for, or read from stdin)."""
    from assay.platform.server.auth.users import add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    add_user(
        db,
        username,
        password,
        projects=project or ["default"],
        role=role,
        display_name=display_name,
    )
    _err.print(f"user {username} added to {', '.join(project or ['default'])}", highlight=False)


@users_app.command("list")
def list_users_command(db: DbOption = None) -> None:
    """List the web UI's users and their projects (never a password hash)."""
    from assay.platform.server.auth.users import list_users

    for user in list_users(db):
        projects = ", ".join(user["projects"]) or "no project"
        cells = [user["username"], user["name"], projects, "(disabled)" if user["disabled"] else ""]
        sys.stdout.write("  ".join(str(c) for c in cells if c) + "\n")


__all__ = [
    "add_user_command",
    "create_command",
    "keys_app",
    "list_command",
    "list_users_command",
    "revoke_command",
    "serve_command",
    "users_app",
    "worker_command",
]
