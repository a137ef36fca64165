"""`OnlineEvaluator`: a rule that scores production traces as they arrive, with no human in the loop.

    evaluator = OnlineEvaluator(name="prod answers", condition="metadata.env = 'prod'",
                                sample_rate=0.5, criteria=["Correct"], judge_model="openai/gpt-4o-mini",
                                daily_budget=1000)
    evaluator.save()                  # from now on, matching traces are judged (half of them)
    evaluator.backfill(since=timedelta(days=7))   # and those of the last week
    evaluator.pause(); evaluator.resume()
    evaluator.refresh().traces        # {"pending", "scored", "error", "skipped_budget", "judge_down"}

`scope="session"` scores whole sessions instead, once each has been quiet `settle_seconds`
(default 300), and again when it grows; `evaluator.sessions` counts them by the same states and
the scores land on the session (`Session.download(id).scores`). Besides saved criteria, the agent
criteria `task_completion`, `agent_goal_accuracy_without_reference`, `plan_adherence` and
`step_efficiency` judge the trajectory (a trace's spans, or the session as one conversation).

The scores are ordinary trace scores whose `source` is `evaluator:<name>@v<version>`: they show
on the trace, in the traces list and its conditions (`score.Correct < 1`) and on the dashboard.
Sampling is decided by a hash of the evaluator's and the trace's ids, so the same traces are
taken after a restart. A trace is scored at most once per version; saving the evaluator with
another condition, sample rate, criteria, judge or scope makes a new version (the scores of
earlier versions stay), so a same-name save never silently rewrites what was scored.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar
from urllib.parse import quote

from assay.platform.sdk.client import current
from assay.platform.sdk.errors import Conflict, NotFound, ValidationFailed
from assay.platform.sdk.objects import Criteria, RagMetricsObject
from assay.platform.sdk.review import _name_of
from assay.platform.sdk.traces import pages

RULE = (
    "name",
    "condition",
    "sample_rate",
    "criteria",
    "judge_model",
    "scope",
    "daily_budget",
    "settle_seconds",
)
STATUS = (
    "status",
    "version",
    "source",
    "traces",
    "sessions",
    "judged_today",
    "budget_exhausted",
    "last_error",
    "last_error_at",
)


def _check(field: str, value: Any) -> Any:
    owner = "OnlineEvaluator"
    if field == "name" and (not isinstance(value, str) or not value.strip()):
        raise ValidationFailed(f"{owner}: name must be a non-empty string", field="name")
    if field == "condition" and not isinstance(value, str):
        raise ValidationFailed(f"{owner}: condition must be a string", field="condition")
    if field == "sample_rate":
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            raise ValidationFailed(
                f"{owner}: sample_rate must be a number from 0 to 1, got {value!r}", field=field
            )
        return float(value)
    if field == "criteria":
        if isinstance(value, (str, Criteria, dict)):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value:
            raise ValidationFailed(f"{owner}: criteria must be a non-empty list", field=field)
        return list(value)
    if field == "judge_model" and (not isinstance(value, str) or not value.strip()):
        raise ValidationFailed(
            f"{owner}: judge_model must name the judge, e.g. 'openai/gpt-4o-mini'", field=field
        )
    if field == "scope" and value not in ("trace", "session"):
        raise ValidationFailed(f"{owner}: scope must be 'trace' or 'session'", field=field)
    bad_budget = isinstance(value, bool) or not isinstance(value, int) or value < 1
    if field == "daily_budget" and value is not None and bad_budget:
        raise ValidationFailed(
            f"{owner}: daily_budget must be a whole number of traces a day (1 or more)",
            field=field,
        )
    bad_settle = isinstance(value, bool) or not isinstance(value, int) or value < 0
    if field == "settle_seconds" and bad_settle:
        raise ValidationFailed(
            f"{owner}: settle_seconds must be a whole number of seconds (0 or more)", field=field
        )
    return value


def _moment(value: Any, field: str) -> str | None:
    """A datetime, an ISO-8601 string or a timedelta (that long ago) as the ISO string sent."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        value = datetime.now(timezone.utc) - value
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
    if isinstance(value, str) and value.strip():
        return value
    raise ValidationFailed(
        f"OnlineEvaluator.backfill: {field} must be a datetime, an ISO-8601 string or a "
        f"timedelta, got {type(value).__name__}",
        field=field,
    )


class OnlineEvaluator(RagMetricsObject):
    object_type: ClassVar[str] = "online evaluator"
    _path: ClassVar[str] = "/evaluators"

    condition: str
    sample_rate: float
    criteria: list[Any]  # Criteria objects, their names or ids
    judge_model: str
    scope: str
    daily_budget: int | None
    settle_seconds: int
    # as the server last said (None before the first save or download)
    status: str | None
    version: int | None
    source: str | None
    traces: dict[str, int]
    sessions: dict[str, int]
    judged_today: int
    budget_exhausted: bool
    last_error: str | None
    last_error_at: str | None

    def __init__(
        self,
        name: str,
        condition: str = "",
        sample_rate: float = 1.0,
        criteria: Any = None,
        judge_model: str | None = None,
        scope: str = "trace",
        daily_budget: int | None = None,
        settle_seconds: int = 300,
    ) -> None:
        values = (
            name,
            condition or "",
            sample_rate,
            criteria,
            judge_model,
            scope,
            daily_budget,
            settle_seconds,
        )
        for field, value in zip(RULE, values, strict=True):
            setattr(self, field, _check(field, value))
        self.id = None
        self._clear_status()

    def _clear_status(self) -> None:
        self.status = self.version = self.source = None
        self.traces, self.judged_today, self.budget_exhausted = {}, 0, False
        self.sessions = {}
        self.last_error = self.last_error_at = None

    # -- what is sent ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "condition": self.condition,
            "sample_rate": self.sample_rate,
            "criteria": [
                _name_of(c, Criteria, "/criteria", f"criteria[{i}]", owner="OnlineEvaluator")
                for i, c in enumerate(self.criteria)
            ],
            "judge_model": self.judge_model,
            "scope": self.scope,
            "daily_budget": self.daily_budget,
            "settle_seconds": self.settle_seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OnlineEvaluator:
        evaluator = cls(
            data.get("name", ""),
            data.get("condition") or "",
            data.get("sample_rate", 1.0),
            data.get("criteria") or [],
            data.get("judge_model"),
            data.get("scope") or "trace",
            data.get("daily_budget"),
            data.get("settle_seconds", 300),
        )
        if "id" in data:
            evaluator._apply(data)
        return evaluator

    def _apply(self, data: dict[str, Any]) -> None:
        for field in RULE:
            if field in data:
                setattr(self, field, _check(field, data[field]))
        self.id = data.get("id")
        for field in STATUS:
            if field in data:
                setattr(self, field, data[field])

    def _named(self) -> str:
        return f"{self._path}/{quote(self.name, safe='')}"

    # -- the server ------------------------------------------------------------------------------
    def save(self, overwrite: bool = False) -> OnlineEvaluator:
        """Store the rule under its name: a new evaluator, or, when the name is taken, the rule
        saved over that evaluator (a changed rule is its next version). `overwrite` is accepted
        as on the other objects and changes nothing: versions keep what each one scored."""
        client, payload = current(), self.to_dict()
        try:
            data = client.request("POST", self._path, json=payload)
        except Conflict:
            data = client.request("PUT", self._named(), json=payload)
        self._apply(data)
        return self

    @classmethod
    def download(cls, name: str | None = None, id: int | None = None) -> OnlineEvaluator:
        """The stored evaluator, by name (or by id), with its status."""
        if (name is None) == (id is None):
            raise ValidationFailed("OnlineEvaluator.download needs exactly one of name= or id=")
        if name is not None:
            _check("name", name)
            return cls.from_dict(current().request("GET", f"{cls._path}/{quote(name, safe='')}"))
        for data in pages(cls._path, {}):
            if data.get("id") == id:
                return cls.from_dict(data)
        raise NotFound(f"no online evaluator with id {id!r} in this project")

    def _saved(self) -> str:
        if self.id is None:
            raise ValidationFailed("OnlineEvaluator: save() it first", field="name")
        return self._named()

    def refresh(self) -> OnlineEvaluator:
        """Read the status again (traces pending, scored, in error, skipped for the budget)."""
        self._apply(current().request("GET", self._saved()))
        return self

    def pause(self) -> OnlineEvaluator:
        """Stop taking traces; those taken already wait for `resume()`."""
        self._apply(current().request("POST", f"{self._saved()}/pause"))
        return self

    def resume(self) -> OnlineEvaluator:
        """Take arriving traces again (a backfill takes those that arrived while paused)."""
        self._apply(current().request("POST", f"{self._saved()}/resume"))
        return self

    def backfill(self, since: Any, until: Any = None) -> int:
        """Score the stored traces that arrived from `since` (a datetime, an ISO-8601 string or a
        timedelta: that long ago) until `until` (default: now) that the rule matches and samples,
        each at most once per version; returns how many were taken."""
        body = {"since": _moment(since, "since"), "until": _moment(until, "until")}
        answer = current().request("POST", f"{self._saved()}/backfill", json=body)
        self._apply(answer["evaluator"])
        return int(answer["taken"])

    def delete(self) -> None:
        """Remove the evaluator (the scores it stored stay on their traces)."""
        current().request("DELETE", self._saved())
        self.id = None
        self._clear_status()

    def __repr__(self) -> str:
        return (
            f"OnlineEvaluator(name={self.name!r}, status={self.status!r}, version={self.version!r})"
        )


__all__ = ["OnlineEvaluator"]
