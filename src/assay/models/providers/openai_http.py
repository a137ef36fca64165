"""The two OpenAI REST calls assay makes (chat completions, embeddings), sent with aiohttp.

Used only for the clients assay builds itself from a model string or a base URL; a caller's own
`openai` client is always used as given (`openai_compat.py`). The OpenAI SDK's request path
(request options, the httpx request model, auth hooks, the aiohttp adapter under httpx) was about
40% of the event loop's CPU per judge call in `benchmarks/orchestration.py`, for two POSTs of a
JSON body that assay already builds. Here the body is posted as it is, the answer read as bytes
and decoded by `openai_wire.decode_completion`, and failures mapped to the same assay errors the
SDK's would have become: an HTTP status through `status_error`, aiohttp's exceptions through
`aiohttp_cause`. `tests/models/test_openai_request_body.py` pins the body and the answer to those
of the SDK's `create`.

One `aiohttp.ClientSession` per event loop (the provider keeps them in a `LoopLocal`): a session
belongs to the loop that made it. Its connector keeps connections alive and does not cap them:
how many requests are in flight is the rate limiter's decision, not the pool's.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from assay._version import __version__
from assay.errors import (
    ModelConnectionError,
    ModelError,
    ModelTimeout,
    ProviderError,
    RateLimited,
    UsageError,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def resolve_base_url(base_url: str | None) -> str:
    """As the SDK resolves it: the argument, else OPENAI_BASE_URL, else OpenAI's; one trailing /."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/") + "/"


def retry_after_seconds(headers: Any) -> float | None:
    """Read `retry-after-ms` or `retry-after` (seconds) from response headers."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue  # an HTTP date; the exponential backoff handles it
    return None


def status_error(status: int, body: str, headers: Any) -> ModelError:
    """The assay error for an HTTP error status (the same for the SDK's and our own requests)."""
    retry_after = retry_after_seconds(headers)
    if status == 429 or (status == 503 and "overload" in body.lower()):
        return RateLimited(
            f"rate limited (HTTP {status}): {body[:300]}",
            retry_after=retry_after,
            status=status,
            body=body,
        )
    return ProviderError(
        f"HTTP {status}: {body[:500]}", status=status, body=body, retry_after=retry_after
    )


def aiohttp_cause(exc: BaseException) -> ModelError | None:
    """The assay error for a failure of aiohttp, found on `exc` or the exceptions it came from
    (the SDK's adapter re-raises aiohttp's errors as httpx ones, a dropped connection among them
    as `httpx.ConnectTimeout`, which would report it as a timeout)."""
    import aiohttp

    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 8:
        if isinstance(cause, (aiohttp.ServerTimeoutError, aiohttp.SocketTimeoutError)):
            return ModelTimeout(f"the request timed out: {type(cause).__name__}: {cause}")
        if isinstance(cause, aiohttp.ClientError):
            return ModelConnectionError(f"the connection failed: {type(cause).__name__}: {cause}")
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


class OpenAIHttp:
    """POSTs JSON bodies to one OpenAI-compatible base URL; made and used on one event loop."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        timeout: float,
        default_headers: dict[str, str] | None = None,
    ) -> None:
        import aiohttp

        self.base_url = base_url
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"assay/{__version__}",
        }
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        # The SDK sends these from the environment too.
        for variable, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            if os.environ.get(variable):
                headers[header] = os.environ[variable]
        headers.update(default_headers or {})
        self._session = aiohttp.ClientSession(
            headers=headers,
            connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
        )

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        """The answer's body for a 2xx status; an assay `ModelError` for anything else."""
        import aiohttp

        try:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError as exc:
            raise UsageError(f"the request cannot be sent as JSON: {exc}") from exc
        try:
            async with self._session.post(
                self.base_url + path, data=data.encode(), timeout=self.timeout
            ) as response:
                payload = await response.read()
                status, headers = response.status, response.headers
        except (TimeoutError, asyncio.TimeoutError) as exc:  # the whole-request timeout
            raise ModelTimeout(
                f"the request timed out after {self.timeout.total:g} s: {type(exc).__name__}"
            ) from exc
        except aiohttp.ClientError as exc:
            raise aiohttp_cause(exc) or ModelConnectionError(str(exc)) from exc
        if status >= 400:
            raise status_error(status, payload.decode("utf-8", errors="replace"), headers)
        return payload

    async def close(self) -> None:
        await self._session.close()


__all__ = [
    "DEFAULT_BASE_URL",
    "OpenAIHttp",
    "aiohttp_cause",
    "resolve_base_url",
    "retry_after_seconds",
    "status_error",
]
