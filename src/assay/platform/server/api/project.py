"""A project's settings under /api/v1/project/settings: read by any key of the project, changed
only by a key with the `admin` scope (a key without it gets a 403 naming the scope).

One setting so far, `retention_days`: how many days the project's logged traces are kept before
the retention thread deletes them (`jobs/retention.py`), or null to keep the server's default
(`assay serve --retention-days`, itself none by default: every trace kept). A value that is not
a whole number from 1 to `RETENTION_DAYS_MAX` is a 422 naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from assay.platform.server.api.deps import Reader, needs, state_of
from assay.platform.server.auth.keys import Principal
from assay.platform.server.schemas.bodies import RETENTION_DAYS_MAX, ProjectSettingsIn
from assay.platform.server.storage.retention import retention_days_of, set_retention_days

router = APIRouter(prefix="/api/v1")
Admin = Annotated[Principal, Depends(needs("admin"))]


def settings_json(principal: Principal, own: int | None, default: float | None) -> dict[str, Any]:
    """The settings as the API and the SDK read them: the project's own horizon, the server's
    default and the one that applies."""
    return {
        "object_type": "project_settings",
        "project": {"id": principal.project_id, "name": principal.project_name},
        "retention_days": own,
        "default_retention_days": default,
        "effective_retention_days": own if own is not None else default,
        "retention_days_max": RETENTION_DAYS_MAX,
    }


@router.get("/project/settings")
def get_settings(request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        own = retention_days_of(session, principal.project_id)
    return settings_json(principal, own, request.app.state.retention_days)


@router.patch("/project/settings")
def change_settings(body: ProjectSettingsIn, request: Request, principal: Admin) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        if "retention_days" in body.model_fields_set:
            set_retention_days(session, principal.project_id, body.retention_days)
        own = retention_days_of(session, principal.project_id)
    return settings_json(principal, own, request.app.state.retention_days)


__all__ = ["router", "settings_json"]
