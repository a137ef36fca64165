"""The HTTP session of the SDK: `login`, and one place where httpx errors become `PlatformError`s.

A 429 (the server's per-key rate limit) is retried with tenacity: after the wait the server asked
for (its `retry_after_s`, else the `Retry-After` header), else an exponential backoff with jitter;
at most `rate_limit_retries` times, never waiting more than `max_retry_wait` seconds at once. The
request was refused before anything ran, so retrying a POST is safe. When the retries run out, or
the server asks for a longer wait, `RateLimited` says so with the server's message.
"""

from __future__ import annotations

import email.utils
import logging
import os
import threading
import time
from typing import Any

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from assay.platform.sdk.errors import (
    AuthError,
    Conflict,
    NotFound,
    PlatformError,
    RateLimited,
    ServerUnavailable,
    ValidationFailed,
)

DEFAULT_BASE_URL = "http://127.0.0.1:8321"
API_PREFIX = "/api/v1"
RATE_LIMIT_RETRIES = 5
MAX_RETRY_WAIT = 30.0


def _retry_after(response: httpx.Response, body: Any) -> float | None:
    """The wait a 429 asks for: our server's exact `retry_after_s`, else `Retry-After` (seconds or
    an HTTP date)."""
    error = body.get("error") if isinstance(body, dict) else None
    exact = error.get("retry_after_s") if isinstance(error, dict) else None
    if isinstance(exact, (int, float)) and exact >= 0:
        return float(exact)
    header = response.headers.get("retry-after")
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


class _WaitAsAsked:
    """Tenacity's wait: what the server asked for, else exponential backoff with full jitter."""

    def __init__(self, max_wait: float) -> None:
        self.backoff = wait_random_exponential(multiplier=0.5, max=max_wait)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            return exc.retry_after
        return self.backoff(state)


class Client:
    """One authenticated connection to an assay server (thread-safe: httpx.Client is). `off`:
    trace logging is off for this session (the exporter and `monitor` read it); every other
    request is sent as usual."""

    def __init__(
        self,
        key: str | None,
        base_url: str,
        *,
        off: bool = False,
        timeout: float = 30.0,
        rate_limit_retries: int = RATE_LIMIT_RETRIES,
        max_retry_wait: float = MAX_RETRY_WAIT,
    ) -> None:
        if rate_limit_retries < 0:
            raise ValueError("rate_limit_retries must be 0 or more")
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.off = off
        self.rate_limit_retries, self.max_retry_wait = rate_limit_retries, max_retry_wait
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
        if not self.key:
            raise AuthError(
                "no API key: pass one to assay.platform.login(key) or set ASSAY_API_KEY "
                "(create one with `assay keys create`)"
            )

        def worth_retrying(exc: BaseException) -> bool:
            # a wait longer than the cap is not waited for: the error says how long instead
            return isinstance(exc, RateLimited) and (exc.retry_after or 0.0) <= self.max_retry_wait

        retrying = Retrying(
            stop=stop_after_attempt(self.rate_limit_retries + 1),
            wait=_WaitAsAsked(self.max_retry_wait),
            retry=retry_if_exception(worth_retrying),
            reraise=True,
        )
        return retrying(self._send, method, path, json, params)

    def _send(self, method: str, path: str, json: Any, params: dict[str, Any] | None) -> Any:
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
    if status == 429:
        raise RateLimited(message, retry_after=_retry_after(response, body))
    if status in (400, 413, 422):
        raise ValidationFailed(
            message, status=status, field=field if isinstance(field, str) else None
        )
    if status >= 500:
        raise ServerUnavailable(f"the assay server failed: {message}", status=status)
    raise PlatformError(message, status=status)


_lock = threading.Lock()
logger = logging.getLogger("assay.platform")
_client: Client | None = None


def _env_key() -> str | None:
    return os.environ.get("ASSAY_API_KEY") or os.environ.get("RAGMETRICS_API_KEY") or None


def login(key: str | None = None, base_url: str | None = None, off: bool = False) -> bool:
    """Authenticate with the assay server; True when it accepts the key, False (the reason
    logged on the `assay.platform` logger) when it refuses the key or cannot be reached.

    The key comes from `key`, else `ASSAY_API_KEY`, else `RAGMETRICS_API_KEY`; the server from
    `base_url`, else `ASSAY_BASE_URL`, else http://127.0.0.1:8321. `off=True` turns off trace
    logging only: monitored calls and traced functions record nothing, while datasets, tasks,
    experiments and reviews work as usual. With `off=True` and no key there is nobody to ask,
    and the switch alone is applied (True).
    """
    global _client
    url = base_url or os.environ.get("ASSAY_BASE_URL") or DEFAULT_BASE_URL
    client = Client(key or _env_key(), url, off=off)
    accepted = True
    if client.key or not off:
        try:
            client.request("GET", "/auth/whoami")
        except PlatformError as exc:  # a refused key, an unreachable server, no key at all
            logger.warning("login to %s failed: %s", url, exc)
            accepted = False
    if not accepted and not off:
        client.close()
        return False
    with _lock:
        previous, _client = _client, client
    if previous is not None:
        previous.close()
    return accepted


def current() -> Client:
    """The logged-in client, or one built from the environment (checked on its first request)."""
    global _client
    with _lock:
        if _client is None:
            _client = Client(_env_key(), os.environ.get("ASSAY_BASE_URL") or DEFAULT_BASE_URL)
        return _client


def whoami() -> dict[str, Any]:
    return current().request("GET", "/auth/whoami")


__all__ = ["DEFAULT_BASE_URL", "Client", "RateLimited", "current", "login", "whoami"]
