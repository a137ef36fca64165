"""What the API routers share: the server state of the request (`state_of`), the key's scopes as
FastAPI dependencies (`Reader`, `Writer`), path and query parameter types, and paging.

The state comes from `request.app.state.assay`, put there by the app factory: routers never
import the app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request

from assay.platform.server.auth.keys import Principal
from assay.platform.server.errors import ApiError, invalid
from assay.platform.server.schemas.bodies import INT_MAX
from assay.platform.server.state import ServerState
from assay.platform.server.storage.repos import MAX_PAGE

Id = Annotated[int, Path(ge=1, le=INT_MAX)]
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=20)]
NameFilter = Annotated[str | None, Query(max_length=200)]
Version = Annotated[int | None, Query(ge=1, le=INT_MAX)]


def state_of(request: Request) -> ServerState:
    return request.app.state.assay


def needs(scope: str) -> Callable[[Request], Principal]:
    def dependency(request: Request) -> Principal:
        principal = request.scope.get("assay.principal")
        if principal is None:
            raise ApiError(401, "unauthorized", "missing API key")
        if not principal.allows(scope):
            raise ApiError(403, "forbidden", f"this API key lacks the {scope!r} scope")
        return principal

    return dependency


Reader = Annotated[Principal, Depends(needs("read"))]
Writer = Annotated[Principal, Depends(needs("write"))]


def clean_name(name: str | None) -> str | None:
    if name is None:
        return None
    if "\x00" in name:
        raise invalid("name", "must not contain NUL characters")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid("name", "must be valid Unicode text") from None
    return name


def page(items: list[Any], cursor: str | None) -> dict[str, Any]:
    return {"items": items, "next_cursor": cursor}


__all__ = [
    "Cursor",
    "Id",
    "Limit",
    "NameFilter",
    "Reader",
    "Version",
    "Writer",
    "clean_name",
    "needs",
    "page",
    "state_of",
]
