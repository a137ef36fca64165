"""The errors a route raises on purpose; the app turns each into `{"error": {code, message, field?,
existing_id?}}` with its status. `send_error` writes that shape from the ASGI middlewares, which
answer before any route runs (a missing key, a body over the cap)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        existing_id: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.field, self.existing_id = field, existing_id

    def body(self) -> dict:
        error: dict = {"code": self.code, "message": self.message}
        if self.field is not None:
            error["field"] = self.field
        if self.existing_id is not None:
            error["existing_id"] = self.existing_id
        return {"error": error}


def not_found(kind: str, ident: object) -> ApiError:
    return ApiError(404, "not_found", f"no {kind} with id {ident} in this project")


def invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "validation_error", f"{field}: {message}", field=field)


def conflict(message: str, existing_id: int | None = None) -> ApiError:
    return ApiError(409, "conflict", message, existing_id=existing_id)


def error_body(status: int, code: str, message: str, **extra: Any) -> bytes:
    """The JSON body of an error answer (`status` is the caller's to send)."""
    return json.dumps({"error": {"code": code, "message": message, **extra}}).encode()


async def send_response(
    send: Any,
    status: int,
    content_type: bytes,
    body: bytes,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """A whole answer from an ASGI middleware (no route ran): status, type, length, body."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_error(
    send: Any, status: int, code: str, message: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send_response(
        send, status, b"application/json", error_body(status, code, message), headers
    )


__all__ = [
    "ApiError",
    "conflict",
    "error_body",
    "invalid",
    "not_found",
    "send_error",
    "send_response",
]
