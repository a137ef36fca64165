"""People's labels of whole sessions (`session_labels`), beside `session_scores`.

A label of a session is given on one content of it: the trace count and `content_key` (count
and latest arrival number, as session-scope evaluators use) are stored with it, those the
reviewer was shown when the page was read, or the session's current content when a label comes
through the API without one. Labels are appended, never changed; the latest per criterion is the
session's label. `session_texts` is the one rule by which a session becomes a question and an
answer for a saved (single-turn) criterion: the judge of session evaluators and queues and the
export of a session queue all read it.
"""

from __future__ import annotations

import builtins
from typing import Any

from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, iso

L = models.SessionLabel
LABELS_MAX = 500  # labels given with a session, newest first


def session_texts(traces: builtins.list[Any]) -> tuple[str | None, str | None, list[str]]:
    """A session (its traces oldest first) as (question, answer, contexts): the last answer,
    the turns before it as "User: …" / "Assistant: …" lines ending with the last question, and
    every turn's contexts once each."""
    if not traces:
        return None, None, []
    *before, last = traces
    lines = [f"User: {t.input_text}\nAssistant: {t.output_text}" for t in before]
    lines.append(f"User: {last.input_text}" if before else (last.input_text or ""))
    contexts = builtins.list(dict.fromkeys(c for t in traces for c in (t.contexts or [])))
    return "\n\n".join(lines).strip() or None, last.output_text, contexts


class SessionLabels(ProjectScoped):
    def add(
        self,
        session_id: str,
        *,
        criterion: str,
        value: Any,
        author: str,
        traces: int,
        content_key: str,
        queue_id: int | None = None,
        comment: str = "",
    ) -> models.SessionLabel:
        row = L(
            project_id=self.project_id,
            session_id=session_id,
            criterion=criterion,
            value=value,
            author=author,
            queue_id=queue_id,
            comment=comment,
            traces=traces,
            content_key=content_key,
        )
        self.session.add(row)
        self.session.flush()
        return row

    def history(self, session_id: str) -> builtins.list[models.SessionLabel]:
        """The session's labels, newest first (at most `LABELS_MAX`)."""
        query = self._select(L).where(L.session_id == session_id).order_by(L.id.desc())
        return builtins.list(self.session.scalars(query.limit(LABELS_MAX)))

    def latest(self, session_id: str) -> dict[str, models.SessionLabel]:
        """The newest label of each criterion."""
        found: dict[str, models.SessionLabel] = {}
        for row in self.history(session_id):
            found.setdefault(row.criterion, row)
        return found

    def criteria_through(self, session_id: str, queue_id: int) -> set[str]:
        """The criteria labelled on the session through the queue."""
        query = self._columns(L, L.criterion).where(
            L.session_id == session_id, L.queue_id == queue_id
        )
        return set(self.session.scalars(query))


def session_label_json(row: models.SessionLabel) -> dict[str, Any]:
    return {
        "id": row.id,
        "session_id": row.session_id,
        "criterion": row.criterion,
        "value": row.value,
        "author": row.author,
        "queue_id": row.queue_id,
        "comment": row.comment,
        "traces": row.traces,
        "content_key": row.content_key,
        "created_at": iso(row.created_at),
    }


__all__ = ["LABELS_MAX", "SessionLabels", "session_label_json", "session_texts"]
