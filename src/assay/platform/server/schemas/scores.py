"""A score's value as it is stored (`typed_value`): a bool, a finite number within `NUMBER_MAX`,
or a label of at most `LABEL_MAX` characters. Shared by the scores API and OTLP ingest."""

from __future__ import annotations

import math
from typing import Any

from assay.platform.server.schemas.bodies import NAME_MAX, _storable

LABEL_MAX = NAME_MAX  # the width of trace_scores.label
NUMBER_MAX = 1e15

ScoreValue = bool | float | str


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def typed_value(value: Any) -> ScoreValue:
    """The value of an ok score as it is stored: a bool, a finite float, or a label."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise ValueError("must be a finite number")
        if abs(number) > NUMBER_MAX:
            raise ValueError(f"must be between -{NUMBER_MAX:.0e} and {NUMBER_MAX:.0e}")
        return number
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("a label must be a non-empty string")
        if len(value) > LABEL_MAX:
            raise ValueError(
                f"a label must be at most {LABEL_MAX} characters, this one has {len(value)}"
            )
        return _storable(value)
    raise ValueError(f"must be a number, a boolean or a label (a string), not {_json_kind(value)}")


__all__ = ["LABEL_MAX", "NUMBER_MAX", "ScoreValue", "typed_value"]
