"""Sessions through the SDK: `Session.list()` (the project's sessions, the latest trace's first)
and `Session.download(id)` (one session's traces, oldest first, as `Trace` objects). A trace is
in a session when its metadata names one: `monitor(client, metadata={"session_id": ...})`,
`with trace_session(...)` around traced code, or OpenTelemetry's `session.id`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from assay.platform.sdk.client import current
from assay.platform.sdk.errors import ValidationFailed
from assay.platform.sdk.traces import Trace, pages


@dataclass
class Session:
    """One conversation: its id, its traces oldest first, and when it started and last moved.
    `total` counts its traces (the server gives at most 1,000 at once: `truncated`)."""

    session_id: str
    traces: list[Trace] = field(default_factory=list)
    first_at: str | None = None
    last_at: str | None = None
    total: int = 0
    truncated: bool = False
    # the whole session's scores (session-scope online evaluators): the latest per criterion,
    # each {criterion, value, outcome, source, traces, content_key, created_at}; and all of them
    scores: dict[str, Any] = field(default_factory=dict)
    score_history: list[dict[str, Any]] = field(default_factory=list)
    # people's labels of the whole session (session-scope review queues): the latest per
    # criterion, each {criterion, value, author, queue_id, comment, traces, content_key, ...}
    labels: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def download(cls, id: str) -> Session:
        """The session `id` with its traces (NotFound when no trace names it)."""
        if not isinstance(id, str) or not id.strip():
            raise ValidationFailed("Session.download: id must be a non-empty string", field="id")
        data = current().request("GET", f"/sessions/{quote(id, safe='')}")
        return cls(
            session_id=data["session_id"],
            traces=[Trace.from_dict(t) for t in data["traces"]],
            first_at=data["first_at"],
            last_at=data["last_at"],
            total=data["total"],
            truncated=data["truncated"],
            scores=data.get("scores") or {},
            score_history=data.get("score_history") or [],
            labels=data.get("labels") or {},
        )

    @classmethod
    def list(cls, limit: int | None = None) -> list[dict[str, Any]]:
        """The project's sessions, the one with the latest trace first: `{session_id, traces,
        first_at, last_at}` each."""
        return [*cls.iterate(limit)]

    @classmethod
    def iterate(cls, limit: int | None = None) -> Iterator[dict[str, Any]]:
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise ValidationFailed(
                "Session.list: limit must be a non-negative integer", field="limit"
            )
        for count, item in enumerate(pages("/sessions", {})):
            if limit is not None and count >= limit:
                return
            yield item

    def to_conversation(self, reference: str | None = None) -> Any:
        """The session as one `MultiTurnSample` (`Trace.to_conversation`), ready for `evaluate`."""
        return Trace.to_conversation(self.traces, reference=reference)


__all__ = ["Session"]
