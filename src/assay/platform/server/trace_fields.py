"""The condition fields of a logged trace, mapped onto the `logged_traces` columns (provisional:
completed once the condition compiler lands)."""

from __future__ import annotations

from typing import Any

from assay.platform.server.errors import ApiError


def compile_condition(text: str | None, *, dialect: str, project_id: int) -> Any:
    """The SQL expression of condition `text` (None: every trace); a bad condition is a 422."""
    if text is None or not text.strip():
        return None
    raise ApiError(422, "validation_error", "condition: not supported yet", field="condition")


__all__ = ["compile_condition"]
