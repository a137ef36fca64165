"""Per-key rate limits: a token bucket for each API key (the `token-bucket` package's `Limiter`).

Every authenticated request under /api/ takes one token from its key's bucket; the bucket holds
`burst` tokens and refills at `rate` tokens a second. A request that finds it empty is answered
429 with `Retry-After` (whole seconds, as HTTP wants) and a JSON error naming the limit and the
exact wait. Off unless configured: `assay serve --rate-limit 20/s [--rate-limit-burst 40]` or
`ASSAY_RATE_LIMIT=20/s` (and `ASSAY_RATE_LIMIT_BURST`).

The buckets live in the server process's memory: every request of one `assay serve` shares them
(they run on one event loop, so a take is never raced), but several server processes behind one
address each keep their own, so a key gets the limit once per process. The health route, the web
UI (signed in with a session, not a key) and OTLP ingestion (its route checks the key itself) are
not limited.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from assay._util.deps import require
from assay.errors import UsageError

require("token_bucket", extra="platform", package="token-bucket", feature="per-key rate limits")
from token_bucket import Limiter, MemoryStorage  # noqa: E402

_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
}
_SPEC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*([a-z]+)\s*$", re.IGNORECASE)
OFF = frozenset({"", "off", "none", "0"})


@dataclass(frozen=True)
class RateLimit:
    """`rate` requests a second on average, bursts of up to `burst`; `spec` as the user wrote it."""

    rate: float
    burst: int
    spec: str

    def describe(self) -> str:
        return f"{self.spec} per API key (bursts of {self.burst})"


def parse_rate_limit(
    spec: str | None, burst: int | str | None = None, *, source: str = "--rate-limit"
) -> RateLimit | None:
    """`N/s`, `N/min` or `N/h` (None for off, empty or 0); `burst` defaults to one second's worth,
    at least 1. A malformed value is a `UsageError` naming `source` and the expected form."""
    if spec is None or spec.strip().lower() in OFF:
        return None
    match = _SPEC.match(spec)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise UsageError(
            f"{source}: {spec!r} is not a rate; write N/s, N/min or N/h (e.g. 20/s), or off"
        )
    count = float(match.group(1))
    if count <= 0:
        return None
    rate = count / _UNITS[unit]
    burst_source = f"{source}-burst" if source.startswith("--") else f"{source}_BURST"
    if burst is None or (isinstance(burst, str) and not burst.strip()):
        size = max(1, math.ceil(rate))
    else:
        try:
            size = int(burst)
        except ValueError:
            raise UsageError(f"{burst_source}: {burst!r} is not a whole number") from None
        if size < 1:
            raise UsageError(f"{burst_source}: must be at least 1, got {size}")
    return RateLimit(rate=rate, burst=size, spec=f"{match.group(1)}/{unit}")


class RateLimitMiddleware:
    """429 once a key's bucket is empty. Sits after the key check, which puts the caller in
    `scope["assay.principal"]`; requests without one (public or UI routes) pass untouched."""

    def __init__(self, app: Any, limit: RateLimit) -> None:
        self.app, self.limit = app, limit
        self._storage = MemoryStorage()
        self._buckets = Limiter(limit.rate, limit.burst, self._storage)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        principal = scope.get("assay.principal") if scope["type"] == "http" else None
        if principal is None or self._buckets.consume(principal.key_id):
            await self.app(scope, receive, send)
            return
        # the bucket was just refilled up to now: the wait is what one whole token still needs
        missing = max(0.0, 1.0 - self._storage.get_token_count(principal.key_id))
        wait = missing / self.limit.rate
        response = JSONResponse(
            {
                "error": {
                    "code": "rate_limited",
                    "message": (
                        f"rate limit exceeded: {self.limit.describe()}; retry in {wait:.2f} s"
                    ),
                    "limit": self.limit.spec,
                    "burst": self.limit.burst,
                    "retry_after_s": round(wait, 3),
                }
            },
            status_code=429,
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )
        await response(scope, receive, send)


__all__ = ["RateLimit", "RateLimitMiddleware", "parse_rate_limit"]
