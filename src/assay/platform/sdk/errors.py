"""The SDK's errors: every HTTP failure is translated at the boundary into one of these.

    PlatformError (AssayError)
    ├── AuthError           no key, a wrong, expired or revoked key (401), or a missing scope (403)
    ├── NotFound            no such object in this project (404)
    ├── Conflict            the name is taken, or the object changed meanwhile (409)
    ├── ValidationFailed    the object breaks a rule (422, 413; or on construction): names the field
    ├── RateLimited         the key is over the server's rate limit (429), after the SDK's retries;
    │                       also an `assay.errors.RateLimited`, so one `except` catches every 429
    └── ServerUnavailable   the server cannot be reached, timed out, or failed (5xx)

`ValidationFailed` is also a `ValueError`, as the seed's constructors raise.
"""

from __future__ import annotations

from assay.errors import AssayError
from assay.errors import RateLimited as ModelRateLimited


class PlatformError(AssayError):
    """A request to the platform failed; the message is one line saying why."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class AuthError(PlatformError):
    pass


class NotFound(PlatformError, LookupError):
    pass


class Conflict(PlatformError):
    def __init__(
        self, message: str, *, status: int | None = 409, existing_id: int | None = None
    ) -> None:
        self.existing_id = existing_id
        super().__init__(message, status=status)


class ValidationFailed(PlatformError, ValueError):
    def __init__(
        self, message: str, *, status: int | None = None, field: str | None = None
    ) -> None:
        self.field = field
        super().__init__(message, status=status)


class ServerUnavailable(PlatformError, ConnectionError):
    pass


class RateLimited(PlatformError, ModelRateLimited):
    """429: the key is over the server's rate limit; `retry_after` is the wait it asked for."""

    def __init__(self, message: str, *, retry_after: float | None, status: int = 429) -> None:
        ModelRateLimited.__init__(self, message, retry_after=retry_after, status=status)


__all__ = [
    "AuthError",
    "Conflict",
    "NotFound",
    "PlatformError",
    "RateLimited",
    "ServerUnavailable",
    "ValidationFailed",
]
