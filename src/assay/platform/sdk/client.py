"""The HTTP session of the SDK: `login`, and one place where httpx errors become `PlatformError`s."""

from __future__ import annotations

import os
import threading
from typing import Any

import httpx

from assay.platform.sdk.errors import (
    AuthError,
    Conflict,
    NotFound,
    PlatformError,
    ServerUnavailable,
    ValidationFailed,
)

DEFAULT_BASE_URL = "http://127.0.0.1:8321"
API_PREFIX = "/api/v1"


class Client:
    """One authenticated connection to an assay server (thread-safe: httpx.Client is)."""

    def __init__(
        self, key: str | None, base_url: str, *, off: bool = False, timeout: float = 30.0
    ) -> None:
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.off = off
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )

    def close(self) -> None:
        self._http.close()

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        if self.off:
            raise PlatformError("the platform client is off (login(off=True)): nothing is sent")
        if not self.key:
            raise AuthError(
                "no API key: pass one to assay.platform.login(key) or set ASSAY_API_KEY "
                "(create one with `assay keys create`)"
            )
        try:
            response = self._http.request(
                method,
                API_PREFIX + path,
                json=json,
                params={k: v for k, v in (params or {}).items() if v is not None},
            )
        except httpx.TimeoutException as exc:
            raise ServerUnavailable(
                f"the assay server at {self.base_url} did not answer in time ({type(exc).__name__})"
            ) from None
        except httpx.TransportError as exc:
            raise ServerUnavailable(
                f"cannot reach the assay server at {self.base_url} ({exc or type(exc).__name__}); "
                "is `assay serve` running?"
            ) from None
        return _decode(response)


def _decode(response: httpx.Response) -> Any:
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    if status < 400:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = str(error.get("message") or response.reason_phrase)
        field = error.get("field")
    else:
        message = f"{status} {response.reason_phrase}: {response.text[:200]}".strip()
        field = None
    if status in (401, 403):
        raise AuthError(message, status=status)
    if status == 404:
        raise NotFound(message, status=status)
    if status in (409, 412):
        existing = error.get("existing_id") if isinstance(error, dict) else None
        raise Conflict(
            message, status=status, existing_id=existing if isinstance(existing, int) else None
        )
    if status in (400, 413, 422):
        raise ValidationFailed(
            message, status=status, field=field if isinstance(field, str) else None
        )
    if status >= 500:
        raise ServerUnavailable(f"the assay server failed: {message}", status=status)
    raise PlatformError(message, status=status)


_lock = threading.Lock()
_client: Client | None = None


def _env_key() -> str | None:
    return os.environ.get("ASSAY_API_KEY") or os.environ.get("RAGMETRICS_API_KEY") or None


def login(key: str | None = None, base_url: str | None = None, off: bool = False) -> bool:
    """Authenticate with the assay server; True when the server accepts the key.

    The key comes from `key`, else `ASSAY_API_KEY`, else `RAGMETRICS_API_KEY`; the server from
    `base_url`, else `ASSAY_BASE_URL`, else http://127.0.0.1:8321. `off=True` sends nothing
    (every later request says so, and monitored calls and traced functions record no trace).
    A rejected key raises `AuthError`; an unreachable server `ServerUnavailable`.
    """
    global _client
    url = base_url or os.environ.get("ASSAY_BASE_URL") or DEFAULT_BASE_URL
    client = Client(key or _env_key(), url, off=off)
    if not off:
        client.request("GET", "/auth/whoami")
    with _lock:
        previous, _client = _client, client
    if previous is not None:
        previous.close()
    return True


def current() -> Client:
    """The logged-in client, or one built from the environment (checked on its first request)."""
    global _client
    with _lock:
        if _client is None:
            _client = Client(_env_key(), os.environ.get("ASSAY_BASE_URL") or DEFAULT_BASE_URL)
        return _client


def whoami() -> dict[str, Any]:
    return current().request("GET", "/auth/whoami")


__all__ = ["DEFAULT_BASE_URL", "Client", "current", "login", "whoami"]
