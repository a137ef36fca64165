"""`ReviewQueue`: traces matching a condition, for people (labels) and judges (scores).

    queue = ReviewQueue("low scores", condition="score.relevance < 3 AND model = 'gpt-4o'",
                        criteria=["relevance"], judge_model="gpt-4o-mini", dataset="reviewed")
    queue.save()                      # created, or the queue of that name updated
    for trace in queue:               # its traces, fetched on first use (queue.traces)
        queue.label(trace, "relevance", 4, comment="fine")
    rows = queue.export()             # labelled rows: input, output, contexts, label, score

Traces stored before the queue existed enter when it is created; new ones as they arrive.
`scope="session"` makes a queue of whole sessions: the condition still selects traces, the
queue holds their sessions, one item each (`queue.sessions`, `queue.label(session_id, ...)`).

    chats = ReviewQueue("whole chats", condition="metadata.env = 'prod'", scope="session",
                        criteria=["task_completion"], judge_model="gpt-4o-mini").save()
    for item in chats.sessions:       # {session_id, traces, content_key, ..., queue_item}
        chats.label(item["session_id"], "task_completion", 1)

Edit mode as for `Trace`: setting a field of a saved queue marks it edited, `save()` sends the change
with the version read, and a concurrent change is refused with `Conflict`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import quote

from assay.platform.sdk.client import current
from assay.platform.sdk.errors import Conflict, NotFound, ValidationFailed
from assay.platform.sdk.objects import Criteria, Dataset, RagMetricsObject
from assay.platform.sdk.traces import Trace, pages

FIELDS = (
    "name",
    "condition",
    "criteria",
    "judge_model",
    "dataset",
    "order",
    "sample_rate",
    "scope",
)
ORDERS = ("arrival", "uncertainty")
SCOPES = ("trace", "session")


def _name_of(
    value: Any, kind: type[RagMetricsObject], path: str, field: str, owner: str = "ReviewQueue"
) -> str:
    """An object, its name or its id → its name (an unsaved object is saved)."""
    if isinstance(value, kind):
        if getattr(value, "id", None) is None:
            value.save()
        return value.name
    if isinstance(value, bool):
        raise ValidationFailed(f"{owner}: {field} {value!r} is not a name or an id", field=field)
    if isinstance(value, int):
        return str(current().request("GET", f"{path}/{value}")["name"])
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value["name"]
    if isinstance(value, str) and value.strip():
        return value
    raise ValidationFailed(
        f"{owner}: {field} must be a {kind.__name__}, its name or its id, got "
        f"{type(value).__name__}",
        field=field,
    )


class ReviewQueue(RagMetricsObject):
    object_type: ClassVar[str] = "reviews"
    _path: ClassVar[str] = "/review-queues"

    # Set through object.__setattr__ (assignment to a field goes through the check of __setattr__).
    condition: str
    criteria: list[Any]  # Criteria objects, their names or ids
    judge_model: str | None
    dataset: Any  # a Dataset, its name or id
    order: str  # "arrival", or "uncertainty": the judge's least sure traces first
    sample_rate: (
        float | None
    )  # None: review every trace; else about this share, unsure ones likelier
    scope: str  # "trace", or "session": the sessions of the matching traces (set at creation)
    version: int | None
    items: dict[str, Any]
    edit_mode: bool
    _stored: dict[str, Any] | None  # the fields as last read or saved
    _traces: list[Trace] | None

    def __init__(
        self,
        name: str,
        condition: str = "",
        criteria: Any = None,
        judge_model: str | None = None,
        dataset: Any = None,
        *,
        order: str = "arrival",
        sample_rate: float | None = None,
        scope: str = "trace",
    ) -> None:
        object.__setattr__(self, "_stored", None)
        object.__setattr__(self, "edit_mode", False)
        object.__setattr__(self, "id", None)
        object.__setattr__(self, "version", None)
        object.__setattr__(self, "items", {})
        object.__setattr__(self, "_traces", None)
        for field, value in zip(
            FIELDS,
            (name, condition, criteria, judge_model, dataset, order, sample_rate, scope),
            strict=True,
        ):
            object.__setattr__(self, field, self._check(field, value))

    @staticmethod
    def _check(field: str, value: Any) -> Any:
        if field == "name" and (not isinstance(value, str) or not value.strip()):
            raise ValidationFailed("ReviewQueue: name must be a non-empty string", field="name")
        if field == "condition":
            value = value or ""
            if not isinstance(value, str):
                raise ValidationFailed("ReviewQueue: condition must be a string", field="condition")
        if field == "order":
            value = value or "arrival"
            if value not in ORDERS:
                raise ValidationFailed(
                    f"ReviewQueue: order must be 'arrival' or 'uncertainty', got {value!r}",
                    field="order",
                )
        if field == "scope":
            value = value or "trace"
            if value not in SCOPES:
                raise ValidationFailed(
                    f"ReviewQueue: scope must be 'trace' or 'session', got {value!r}",
                    field="scope",
                )
        if (
            field == "sample_rate"
            and value is not None
            and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1
            )
        ):
            raise ValidationFailed(
                f"ReviewQueue: sample_rate must be more than 0 and at most 1, got {value!r}",
                field="sample_rate",
            )
        if field == "judge_model" and value is not None and not isinstance(value, str):
            raise ValidationFailed("ReviewQueue: judge_model must be a model string", field=field)
        if field == "criteria":
            if value is None:
                return []
            if isinstance(value, (str, int, Criteria, dict)):
                value = [value]
            if not isinstance(value, (list, tuple)):
                raise ValidationFailed("ReviewQueue: criteria must be a list", field="criteria")
            return list(value)
        return value

    def __setattr__(self, key: str, value: Any) -> None:
        if key in FIELDS:
            value = self._check(key, value)
            if self._stored is not None:
                object.__setattr__(self, "edit_mode", True)
        object.__setattr__(self, key, value)

    # -- what is sent ----------------------------------------------------------------------------
    def _process_criteria(self, criteria: Any) -> list[str]:
        return [
            _name_of(c, Criteria, "/criteria", f"criteria[{i}]") for i, c in enumerate(criteria)
        ]

    def _process_dataset(self, dataset: Any) -> str | None:
        return None if dataset is None else _name_of(dataset, Dataset, "/datasets", "dataset")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "condition": self.condition,
            "criteria": self._process_criteria(self.criteria),
            "judge_model": self.judge_model or None,
            "dataset": self._process_dataset(self.dataset),
            "order": self.order,
            "sample_rate": None if self.sample_rate is None else float(self.sample_rate),
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReviewQueue:
        queue = cls(
            data.get("name", ""),
            data.get("condition") or "",
            data.get("criteria") or [],
            data.get("judge_model"),
            data.get("dataset"),
            order=data.get("order") or "arrival",
            sample_rate=data.get("sample_rate"),
            scope=data.get("scope") or "trace",
        )
        if "id" in data:
            queue._apply(data)
        return queue

    def _apply(self, data: dict[str, Any]) -> None:
        for field in FIELDS:
            object.__setattr__(self, field, self._check(field, data.get(field)))
        object.__setattr__(self, "id", data.get("id"))
        object.__setattr__(self, "version", data.get("version"))
        object.__setattr__(self, "items", data.get("items") or {})
        object.__setattr__(self, "edit_mode", False)
        object.__setattr__(self, "_stored", {f: data.get(f) for f in FIELDS})
        object.__setattr__(self, "_traces", None)

    # -- the server ------------------------------------------------------------------------------
    def save(self, overwrite: bool = False) -> ReviewQueue:
        """Create the queue (its matching stored traces enter at once), or send the edits. A
        queue saved under a taken name is an edit of that queue, version-checked like any other
        (`overwrite` is accepted as on the other objects and changes nothing here)."""
        client, payload = current(), self.to_dict()
        if self._stored is None:
            try:
                data = client.request("POST", self._path, json=payload)
            except Conflict:  # a queue of that name exists: this save updates it
                existing = client.request("GET", f"{self._path}/{quote(self.name, safe='')}")
                self._apply(existing)
                if existing.get("scope", "trace") != payload["scope"]:
                    raise ValidationFailed(
                        f"ReviewQueue: a queue named {self.name!r} exists with scope "
                        f"{existing.get('scope')!r}; the scope of a saved queue does not change",
                        field="scope",
                    ) from None
                return self._patch({k: v for k, v in payload.items() if existing.get(k) != v})
            self._apply(data)
            return self
        changes = {k: v for k, v in payload.items() if self._stored.get(k) != v}
        if "scope" in changes:
            raise ValidationFailed(
                f"ReviewQueue: the scope of a saved queue stays {self._stored.get('scope')!r}; "
                "make a new queue for the other scope",
                field="scope",
            )
        return self._patch(changes)

    def _patch(self, changes: dict[str, Any]) -> ReviewQueue:
        if not changes:
            object.__setattr__(self, "edit_mode", False)
            return self
        stored_name = self._stored["name"] if self._stored else self.name
        try:
            data = current().request(
                "PATCH",
                f"{self._path}/{quote(stored_name, safe='')}",
                json={"version": self.version, "changes": changes},
            )
        except Conflict as exc:
            raise Conflict(
                f"review queue {stored_name!r} was changed by someone else after version "
                f"{self.version} was read (or the new name is taken); nothing was saved. "
                f"Download it again and redo the change. ({exc})",
                status=exc.status,
            ) from None
        self._apply(data)
        return self

    @classmethod
    def download(cls, name: str | None = None, id: int | None = None) -> ReviewQueue:
        """The stored queue, by name (or by id)."""
        if (name is None) == (id is None):
            raise ValidationFailed("ReviewQueue.download needs exactly one of name= or id=")
        if name is not None:
            if not isinstance(name, str) or not name.strip():
                raise ValidationFailed("ReviewQueue.download: name must be a string", field="name")
            return cls.from_dict(current().request("GET", f"{cls._path}/{quote(name, safe='')}"))
        for data in pages(cls._path, {}):
            if data.get("id") == id:
                return cls.from_dict(data)
        raise NotFound(f"no review queue with id {id!r} in this project")

    def delete(self) -> None:
        """Remove the queue and its items (the traces, scores and labels stay)."""
        current().request("DELETE", f"{self._path}/{self._stored_name()}")
        object.__setattr__(self, "_stored", None)
        object.__setattr__(self, "id", None)

    def _stored_name(self) -> str:
        """The stored name, quoted for a URL path."""
        if self._stored is None:
            raise ValidationFailed("ReviewQueue: save() the queue first", field="name")
        return quote(str(self._stored["name"]), safe="")

    @property
    def traces(self) -> list[Trace]:
        """The queue's traces in the order they entered (fetched once; `refresh()` to re-read)."""
        if self._traces is None:
            traces = self.traces_with()
            object.__setattr__(self, "_traces", traces)
            return traces
        return self._traces

    def traces_with(self, status: str | None = None) -> list[Trace]:
        """The queue's traces, all or those whose item is "pending" or "done"."""
        if status not in (None, "pending", "done"):
            raise ValidationFailed(
                "ReviewQueue: status must be 'pending' or 'done'", field="status"
            )
        path = f"{self._path}/{self._stored_name()}/traces"
        found = []
        for data in pages(path, {"status": status}):
            trace = Trace.from_dict(data)
            object.__setattr__(trace, "queue_item", data.get("queue_item"))
            found.append(trace)
        return found

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """A session queue's sessions in the order they entered: {session_id, traces,
        content_key, first_at, last_at, queue_item} each, the session as it is now."""
        return self.sessions_with()

    def sessions_with(self, status: str | None = None) -> list[dict[str, Any]]:
        """A session queue's sessions, all or those whose item is "pending" or "done"."""
        if status not in (None, "pending", "done"):
            raise ValidationFailed(
                "ReviewQueue: status must be 'pending' or 'done'", field="status"
            )
        return [*pages(f"{self._path}/{self._stored_name()}/sessions", {"status": status})]

    def refresh(self) -> ReviewQueue:
        self._apply(current().request("GET", f"{self._path}/{self._stored_name()}"))
        return self

    def __iter__(self) -> Iterator[Trace]:
        return iter(self.traces)

    def label(
        self, trace: Trace | str, criterion: str, value: Any, *, comment: str = ""
    ) -> dict[str, Any]:
        """A person's label of `criterion` on a trace of this queue (author: the calling key);
        for a session queue, on a session (its id), given on its content as it is now."""
        ident = trace.id if isinstance(trace, Trace) else trace
        if not isinstance(ident, str) or not ident:
            what = "a session id" if self.scope == "session" else "a Trace or its id"
            raise ValidationFailed(f"ReviewQueue.label: trace must be {what}", field="trace")
        self._stored_name()
        assert self._stored is not None  # _stored_name() has refused an unsaved queue
        if self._stored.get("scope") == "session":
            body = {
                "criterion": criterion,
                "value": value,
                "queue": self._stored["name"],
                "comment": comment,
            }
            return current().request("POST", f"/sessions/{quote(ident, safe='')}/labels", json=body)
        body = {
            "criterion": criterion,
            "value": value,
            "queue": self._stored["name"],
            "comment": comment,
        }
        return current().request("POST", f"/traces/{ident}/labels", json=body)

    def export(self) -> list[dict[str, Any]]:
        """Labelled rows for alignment: {trace_id, input, output, contexts, criterion, label,
        label_author, label_at, score, score_status, score_source}, one per labelled criterion;
        a session queue's rows add session_id, traces and content_key (the content labelled)."""
        return [*pages(f"{self._path}/{self._stored_name()}/export", {}, key="rows")]

    def __repr__(self) -> str:
        return f"ReviewQueue(name={self.name!r}, condition={self.condition!r}, version={self.version!r})"


__all__ = ["ReviewQueue"]
