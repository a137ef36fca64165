"""Request bodies of the online-evaluator routes (`api/evaluators.py`): the rule, and a backfill's
time range. A problem is a 422 naming the field (`sample_rate`, `criteria[2]`, `until`)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictFloat, StrictInt, ValidationInfo, field_validator

from assay.platform.server.schemas.bodies import INT_MAX, Body, Name, Short
from assay.platform.server.schemas.traces import Condition, CriterionNames, utc

SCOPES = ("trace", "session")
SETTLE_DEFAULT = 300  # five minutes with no new trace: the conversation has most likely ended
SETTLE_MAX = 7 * 24 * 3600


class EvaluatorIn(Body):
    name: Name
    condition: Condition = ""
    sample_rate: StrictFloat | StrictInt = 1.0
    criteria: CriterionNames = Field(min_length=1)
    judge_model: Annotated[Short, Field(min_length=1)]
    scope: Literal["trace", "session"] = "trace"
    # session scope: judged once the session has been quiet this long (seconds)
    settle_seconds: Annotated[StrictInt, Field(ge=0, le=SETTLE_MAX)] = SETTLE_DEFAULT
    daily_budget: Annotated[StrictInt, Field(ge=1, le=INT_MAX)] | None = None

    @field_validator("name")
    @classmethod
    def _named(cls, name: str) -> str:
        if not name.strip():
            raise ValueError("must not be empty")
        return name

    @field_validator("sample_rate")
    @classmethod
    def _rate(cls, rate: float) -> float:
        if not math.isfinite(rate) or not 0.0 <= rate <= 1.0:
            raise ValueError(
                f"must be a number from 0 to 1 (the share of traces judged), got {rate}"
            )
        return float(rate)

    @field_validator("judge_model")
    @classmethod
    def _model(cls, model: str) -> str:
        if not model.strip():
            raise ValueError("must name the judge model, e.g. 'openai/gpt-4o-mini'")
        return model.strip()


class BackfillIn(Body):
    since: datetime
    until: datetime | None = None

    @field_validator("since")
    @classmethod
    def _since(cls, since: datetime) -> datetime:
        return utc(since)

    @field_validator("until")
    @classmethod
    def _until(cls, until: datetime | None, info: ValidationInfo) -> datetime | None:
        until, since = utc(until), info.data.get("since")
        if until is not None and since is not None and until <= since:
            raise ValueError("must be after since")
        return until


__all__ = ["SCOPES", "SETTLE_DEFAULT", "SETTLE_MAX", "BackfillIn", "EvaluatorIn"]
