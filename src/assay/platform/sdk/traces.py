"""`Trace`: a logged interaction, listed, filtered, downloaded and edited on the server.

Edit mode (the seed's): on a trace read from the server, setting `input`, `output`, `contexts`,
`metadata` or `tags` marks it edited (`edit_mode`); `save()` sends `{version, changes}` with the
version it was read at. If someone saved it meanwhile the server refuses with 409 and `save()`
raises `Conflict` (nothing is written, never a lost update): download it again and redo the change.
The server keeps every earlier state (`revisions()`). Changes made in place
(`trace.contexts.append(...)`) count too: `save()` compares with what was read.
"""

from __future__ import annotations

import builtins
import copy
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from assay.platform.sdk.client import current
from assay.platform.sdk.errors import Conflict, NotFound, ValidationFailed
from assay.platform.sdk.objects import PAGE, Dataset, RagMetricsObject

EDITABLE = ("input", "output", "contexts", "metadata", "tags")
FIELDS = ("id", "created_at", "input", "output", "raw_input", "raw_output", "contexts", "metadata")
# what the server adds; read-only here
SERVER_FIELDS = (
    "version",
    "edited",
    "model",
    "usage",
    "latency_ms",
    "error",
    "tags",
    "spans",
    "session_id",
)


def pages(path: str, params: dict[str, Any], *, key: str = "items") -> Iterator[dict[str, Any]]:
    cursor = None
    while True:
        page = current().request("GET", path, params={**params, "limit": PAGE, "cursor": cursor})
        yield from page[key]
        cursor = page.get("next_cursor")
        if not cursor:
            return


def _check_edit(owner: str, key: str, value: Any) -> None:
    if key == "contexts" and (
        not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value)
    ):
        raise ValidationFailed(f"{owner}: contexts must be a list of strings", field="contexts")
    if key == "metadata" and not isinstance(value, dict):
        raise ValidationFailed(f"{owner}: metadata must be a dict", field="metadata")
    if key == "tags" and (
        not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value)
    ):
        raise ValidationFailed(f"{owner}: tags must be a list of strings", field="tags")


class Trace(RagMetricsObject):
    """A logged LLM interaction: processed and raw input/output, contexts, metadata, spans."""

    object_type: ClassVar[str] = "trace"
    _path: ClassVar[str] = "/traces"

    # Set through object.__setattr__: assignment goes through the edit check of __setattr__.
    id: str | None  # type: ignore[assignment]  # a trace's id is the logger's string, not a number
    created_at: str | None
    input: Any
    output: Any
    raw_input: Any
    raw_output: Any
    contexts: builtins.list[str]
    metadata: dict[str, Any]
    version: int | None
    edited: bool | None
    model: str | None
    usage: dict[str, Any] | None
    latency_ms: float | None
    error: str | None
    tags: builtins.list[str]
    spans: builtins.list[dict[str, Any]]
    session_id: str | None  # the session the server filed it under (metadata session_id)
    scores: dict[str, Any]
    labels: dict[str, Any]
    edit_mode: bool
    _stored: dict[str, Any] | None  # the editable fields as last read or saved

    def __init__(
        self,
        id: str | None = None,
        created_at: str | None = None,
        input: Any = None,
        output: Any = None,
        raw_input: Any = None,
        raw_output: Any = None,
        contexts: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        _check_edit("Trace", "contexts", contexts or [])
        _check_edit("Trace", "metadata", metadata or {})
        object.__setattr__(self, "_stored", None)  # the editable fields as last read or saved
        values = dict(id=id, created_at=created_at, input=input, output=output)
        values.update(raw_input=raw_input, raw_output=raw_output)
        values.update(contexts=list(contexts or []), metadata=dict(metadata or {}))
        for field, value in values.items():
            object.__setattr__(self, field, value)
        for field in SERVER_FIELDS:
            object.__setattr__(self, field, [] if field in ("tags", "spans") else None)
        object.__setattr__(self, "scores", {})
        object.__setattr__(self, "labels", {})
        object.__setattr__(self, "edit_mode", False)

    def __setattr__(self, key: str, value: Any) -> None:
        if self._stored is not None and key != "edit_mode":
            if key not in EDITABLE:
                raise ValidationFailed(
                    f"Trace: {key} of a logged trace cannot be edited (editable: "
                    f"{', '.join(EDITABLE)})",
                    field=key,
                )
            _check_edit("Trace", key, value)
            value = list(value) if key in ("contexts", "tags") else value
            object.__setattr__(self, "edit_mode", True)
        object.__setattr__(self, key, value)

    @property
    def name(self) -> str:  # type: ignore[override]  # a trace is named by its id: no name to set
        return str(self.id)

    # -- dicts ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = {field: getattr(self, field) for field in FIELDS}
        data.update({field: getattr(self, field) for field in SERVER_FIELDS})
        data.update(scores=self.scores, labels=self.labels, edit_mode=self.edit_mode)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        trace = cls(**{field: data.get(field) for field in FIELDS})
        trace._apply(data)
        return trace

    def _apply(self, data: dict[str, Any]) -> None:
        for field in (*FIELDS, *SERVER_FIELDS):
            if field in data:
                object.__setattr__(self, field, data[field])
        object.__setattr__(self, "scores", data.get("scores") or {})
        object.__setattr__(self, "labels", data.get("labels") or {})
        object.__setattr__(self, "edit_mode", False)
        object.__setattr__(self, "_stored", copy.deepcopy({f: getattr(self, f) for f in EDITABLE}))

    def changes(self) -> dict[str, Any]:
        """The editable fields that differ from what was read (in place changes included)."""
        if self._stored is None:
            return {}
        return {f: getattr(self, f) for f in EDITABLE if getattr(self, f) != self._stored[f]}

    # -- the server ----------------------------------------------------------------------------
    def save(self, overwrite: bool = False) -> Trace:
        """A new trace is logged; a downloaded one, or one made with a logged trace's id, sends
        its edits with the version read. (`overwrite` has no meaning for a trace, whose id and
        version say which one is changed; it is accepted as on the other objects.)"""
        client = current()
        if self._stored is None and self.id is not None:
            existing = self._stored_copy(client)
            if existing is not None:  # Trace(id=<logged id>) then attributes: an edit of it
                return self._save_onto(existing)
        if self._stored is None:
            if self.id is None:
                object.__setattr__(self, "id", str(uuid.uuid4()))
            body = {
                field: getattr(self, field)
                for field in ("id", "created_at", "input", "output", "raw_input", "raw_output")
            }
            body.update(contexts=self.contexts, metadata=self.metadata, tags=list(self.tags or []))
            client.request("POST", self._path, json={"traces": [body]})
            self._apply(client.request("GET", f"{self._path}/{self.id}"))
            return self
        changes = self.changes()
        if not changes:
            object.__setattr__(self, "edit_mode", False)
            return self
        try:
            data = client.request(
                "PATCH",
                f"{self._path}/{self.id}",
                json={"version": self.version, "changes": changes},
            )
        except Conflict as exc:
            raise Conflict(
                f"trace {self.id} was changed by someone else after version {self.version} was "
                f"read; nothing was saved. Download it again (Trace.download(id=...)), redo the "
                f"change and save. ({exc})",
                status=exc.status,
            ) from None
        self._apply(data)
        return self

    def _stored_copy(self, client: Any) -> dict[str, Any] | None:
        """The logged trace with this object's id, or None when there is none yet."""
        try:
            data: dict[str, Any] = client.request("GET", f"{self._path}/{self.id}")
        except NotFound:
            return None
        return data

    def _save_onto(self, existing: dict[str, Any]) -> Trace:
        """Send what was set on this object as edits of the logged trace `existing`: the fields
        given a value are compared with the stored ones; a differing field that cannot be
        edited is refused by name, and nothing is sent."""
        given = {
            field: getattr(self, field)
            for field in FIELDS
            if field != "id" and getattr(self, field) not in (None, [], {})
        }
        stored = Trace.from_dict(existing)
        for field, value in given.items():
            if field not in EDITABLE and value != getattr(stored, field):
                raise ValidationFailed(
                    f"Trace: {field} of logged trace {self.id} cannot be edited (editable: "
                    f"{', '.join(EDITABLE)}); nothing was saved",
                    field=field,
                )
        for field, value in given.items():
            if field in EDITABLE:
                setattr(stored, field, value)
        if self.tags and self.tags != stored.tags:
            stored.tags = list(self.tags)
        stored.save()
        self._apply(stored.to_dict())
        return self

    @classmethod
    def download(  # type: ignore[override]  # a trace's id is a string, not a number
        cls, name: str | None = None, id: str | None = None
    ) -> Trace:
        """The stored trace by id (`Trace.download(id=...)`, or the id as first argument)."""
        ident = id if id is not None else name
        if not isinstance(ident, str) or not ident.strip():
            raise ValidationFailed("Trace.download needs the trace id (a string)", field="id")
        return cls.from_dict(current().request("GET", f"{cls._path}/{ident}"))

    @classmethod
    def list(
        cls,
        condition: str | None = None,
        limit: int | None = None,
        *,
        session_id: str | None = None,
    ) -> builtins.list[Trace]:
        """Traces newest first, those matching `condition` (the review-queue language) if given,
        and of one session if `session_id` is given."""
        return [*cls.iterate(condition, limit, session_id=session_id)]

    @classmethod
    def iterate(
        cls,
        condition: str | None = None,
        limit: int | None = None,
        *,
        session_id: str | None = None,
    ) -> Iterator[Trace]:
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise ValidationFailed(
                "Trace.list: limit must be a non-negative integer", field="limit"
            )
        # whole traces (the list's default is a summary per trace): what `list` documents is a
        # Trace with its spans, raw payloads and contexts, editable like a downloaded one
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            raise ValidationFailed(
                "Trace.list: session_id must be a non-empty string", field="session_id"
            )
        params = {"condition": condition or None, "full": "true", "session_id": session_id}
        for count, data in enumerate(pages(cls._path, params)):
            if limit is not None and count >= limit:
                return
            yield cls.from_dict(data)

    @classmethod
    def session(cls, session_id: str, limit: int | None = None) -> builtins.list[Trace]:
        """The traces of one session, oldest first: those whose metadata names it as
        `session_id` (OTLP's `session.id`) or `conversation_id` (GenAI's `gen_ai.conversation.id`)."""
        if not isinstance(session_id, str) or not session_id.strip():
            raise ValidationFailed(
                "Trace.session: session_id must be a non-empty string", field="session_id"
            )
        # the server's session column holds metadata session_id, else conversation_id (indexed)
        found = cls.list(limit=limit, session_id=session_id)
        return sorted(found, key=lambda trace: str(trace.created_at or ""))

    def to_sample(self, reference: str | None = None) -> Any:
        """This trace as a `MultiTurnSample`: its messages, tool calls and tool outputs
        (`assay.integrations.trajectory.trace_to_sample`), ready for `evaluate`."""
        from assay.integrations.trajectory import trace_to_sample

        return trace_to_sample(self.to_dict(), reference=reference)

    @staticmethod
    def to_conversation(traces: Iterable[Trace], reference: str | None = None) -> Any:
        """The traces of one session (`Trace.session(id)`) as one `MultiTurnSample`."""
        from assay.integrations.trajectory import to_conversation

        return to_conversation([trace.to_dict() for trace in traces], reference=reference)

    def revisions(self) -> builtins.list[dict[str, Any]]:
        """The earlier states of this trace, oldest first: {version, snapshot, edited_by, edited_at}."""
        self._need_id("revisions")
        return current().request("GET", f"{self._path}/{self.id}/revisions")["items"]

    def label(
        self, criterion: str, value: Any, *, comment: str = "", queue: str | None = None
    ) -> dict[str, Any]:
        """Add a label (append-only; the calling key is its author)."""
        self._need_id("label")
        body = {"criterion": criterion, "value": value, "queue": queue, "comment": comment}
        return current().request("POST", f"{self._path}/{self.id}/labels", json=body)

    def add_to_dataset(self, dataset: str | Dataset) -> dict[str, Any]:
        """Add this trace to a dataset as an example (see `Trace.to_dataset`)."""
        return Trace.to_dataset([self], dataset)

    @staticmethod
    def to_dataset(traces: Iterable[Trace | str], dataset: str | Dataset) -> dict[str, Any]:
        """Add traces to the named dataset as examples (question = input text, answer = output
        text, their contexts): a new version of it, or a new dataset."""
        name = dataset.name if isinstance(dataset, Dataset) else dataset
        if not isinstance(name, str) or not name.strip():
            raise ValidationFailed(
                "to_dataset: dataset must be a Dataset or its name", field="dataset"
            )
        ids = []
        for index, trace in enumerate(traces):
            ident = trace.id if isinstance(trace, Trace) else trace
            if not isinstance(ident, str):
                raise ValidationFailed(
                    f"to_dataset: traces[{index}] must be a saved Trace or a trace id",
                    field="trace_ids",
                )
            ids.append(ident)
        return current().request(
            "POST", "/traces/to-dataset", json={"trace_ids": ids, "dataset": name}
        )

    def _need_id(self, what: str) -> None:
        if self.id is None or self._stored is None:
            raise NotFound(f"Trace.{what}: this trace is not on the server yet (save() it first)")

    def __repr__(self) -> str:
        return f"Trace(id={self.id!r}, version={self.version!r}, edited={self.edited!r})"


__all__ = ["EDITABLE", "Trace", "pages"]
