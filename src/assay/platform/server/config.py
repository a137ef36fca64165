"""Where the server keeps its data (the database URL, the pepper of the API-key hashes), the
per-key rate limit it enforces and the largest OTLP export it accepts."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Any

from assay.errors import UsageError


def assay_home() -> Path:
    """`ASSAY_HOME`, else ~/.assay."""
    return Path(os.environ.get("ASSAY_HOME") or Path.home() / ".assay").expanduser()


def default_db_url() -> str:
    """The embedded database: a SQLite file under `assay_home()`."""
    return f"sqlite:///{assay_home() / 'assay.sqlite'}"


def resolve_db_url(url: str | None) -> str:
    """`url`, else `ASSAY_DB_URL`, else the embedded SQLite file; a bare path means a SQLite file."""
    url = url or os.environ.get("ASSAY_DB_URL") or default_db_url()
    if "://" not in url:
        url = f"sqlite:///{Path(url).expanduser().resolve()}"
    scheme = url.split("://", 1)[0]
    if scheme.startswith("postgresql") and "+" not in scheme:
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    elif not (scheme.startswith("sqlite") or scheme.startswith("postgresql")):
        raise UsageError(
            f"database URL must be sqlite:///PATH or postgresql+psycopg://…, got {scheme}://…"
        )
    return url


def rate_limit_setting(spec: str | None, burst: int | None) -> dict[str, Any]:
    """The rate limit to enforce, as `rate_limit.parse_rate_limit`'s arguments: the given one,
    else `ASSAY_RATE_LIMIT` (and `ASSAY_RATE_LIMIT_BURST`); nothing set means off."""
    from_env = spec is None
    if from_env:
        spec = os.environ.get("ASSAY_RATE_LIMIT")
    if burst is None:
        burst_value: str | None = os.environ.get("ASSAY_RATE_LIMIT_BURST")
    else:
        burst_value = str(burst)
    return {
        "spec": spec,
        "burst": burst_value,
        "source": "ASSAY_RATE_LIMIT" if from_env else "--rate-limit",
    }


DEFAULT_MAX_REQUEST_MB = 32.0
MAX_REQUEST_HINT = "raise it with `assay serve --max-request-mb N` or ASSAY_MAX_REQUEST_MB=N"


def max_request_bytes(megabytes: float | None) -> int:
    """The largest OTLP export request, in bytes, before and after gzip: `megabytes`, else
    `ASSAY_MAX_REQUEST_MB`, else 32 MB. The official exporters send up to 512 spans a request
    by default, about 1.2 MB with 2,000-character messages, so the default leaves wide margin; it
    also bounds what a small gzip body may unpack to."""
    source = "--max-request-mb"
    if megabytes is None:
        text = os.environ.get("ASSAY_MAX_REQUEST_MB", "").strip()
        if not text:
            return int(DEFAULT_MAX_REQUEST_MB * 1_000_000)
        source = "ASSAY_MAX_REQUEST_MB"
        try:
            megabytes = float(text)
        except ValueError:
            raise UsageError(f"{source}={text!r}: a number of megabytes, e.g. 32") from None
    if not 0 < megabytes <= 4096:
        raise UsageError(f"{source}: between 0 and 4096 megabytes, got {megabytes:g}")
    return int(megabytes * 1_000_000)


def sqlite_path(url: str) -> Path | None:
    if not url.startswith("sqlite"):
        return None
    path = url.split(":///", 1)[1] if ":///" in url else ""
    if not path or path == ":memory:":
        return None
    return Path(path.split("?", 1)[0])


def pepper(url: str) -> bytes:
    """The HMAC key of stored API-key hashes: `ASSAY_SECRET_KEY`, else a 0600 file beside the database
    (for PostgreSQL, under `assay_home()`), created on first use."""
    env = os.environ.get("ASSAY_SECRET_KEY")
    if env:
        return env.encode()
    db_file = sqlite_path(url)
    path = (db_file.parent if db_file is not None else assay_home()) / "assay.secret"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # written whole to a private temporary file, then linked into place: a concurrent
        # process sees no file or the whole secret, never an empty one
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    value = path.read_text().strip()
    if not value:
        raise UsageError(
            f"{path} is empty: delete it (existing API keys stop working) or set ASSAY_SECRET_KEY"
        )
    return value.encode()


__all__ = [
    "assay_home",
    "default_db_url",
    "max_request_bytes",
    "pepper",
    "rate_limit_setting",
    "resolve_db_url",
    "sqlite_path",
]
