"""Storage of logged traces: idempotent ingest, paging, edits with an optimistic version check
(the state before each edit kept as a revision), append-only scores and labels, and adding
traces to a dataset as examples. Like every repository it is built for one project."""

from __future__ import annotations

import builtins
import json
from datetime import datetime, timezone
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select

from assay.platform.server.errors import ApiError, invalid, not_found
from assay.platform.server.schemas.bodies import ExampleIn
from assay.platform.server.schemas.traces import TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import DatasetRepo, ProjectScoped, decode_cursor
from assay.platform.server.storage.rollups import Deltas, part_of
from assay.platform.server.storage.trace_insert import insert_new
from assay.platform.server.storage.trace_payload import row_columns
from assay.platform.server.storage.trace_rows import (
    SUMMARY_CHARS,
    flatten_text,
    insert_for,
    label_json,
    outcome_json,
    session_of,
    snapshot,
    summary_json,
    trace_json,
    trace_values,
)

T = models.LoggedTrace


class TraceRepo(ProjectScoped):
    # -- ingest ------------------------------------------------------------------------------------
    def ingest(
        self, traces: builtins.list[TraceIn], *, experiment_id: int | None = None
    ) -> tuple[builtins.list[str], int]:
        """Store the traces whose id is new; returns (ids stored, duplicates ignored). A trace sent
        twice (in one batch, or again later, or by two clients at once) is stored once.
        `experiment_id` marks generations the server publishes (`experiment_traces.py`): they
        are kept out of the dashboard's rollups (`rollups.Part.experiment`)."""
        now = datetime.now(timezone.utc)
        rows: dict[str, dict[str, Any]] = {}
        for trace in traces:
            if trace.id not in rows:
                rows[trace.id] = row_columns(trace_values(trace, self.project_id, now))
                rows[trace.id]["experiment_id"] = experiment_id
        ordered = list(rows.values())  # in batch order: arrival order is the paging order
        if not ordered:
            return [], len(traces)
        inserted = insert_new(self.session, ordered)  # one statement (trace_insert)
        stored = [row["id"] for row in ordered if row["id"] in inserted]  # in batch order
        deltas = Deltas(self.project_id)  # the dashboard's rollups, in the same transaction
        for row in ordered:
            if row["id"] in inserted:
                deltas.add(part_of(row))
        deltas.write(self.session)
        return stored, len(traces) - len(stored)

    # -- reading -----------------------------------------------------------------------------------
    def get(self, trace_id: str, *, lock: bool = False) -> models.LoggedTrace:
        query = self._select(T).where(T.id == trace_id)
        if lock:
            query = query.with_for_update()
        row = self.session.scalar(query)
        if row is None:
            raise not_found("trace", trace_id)
        return row

    def list(
        self, *, limit: int, cursor: str | None, where: Any = None
    ) -> tuple[builtins.list[models.LoggedTrace], str | None]:
        """Newest first (by arrival); the cursor is the arrival number of the last trace given."""
        query = self._select(T)
        before = decode_cursor(cursor)
        if before is not None:
            query = query.where(T.seq < before)
        if where is not None:
            query = query.where(where)
        rows = list(self.session.scalars(query.order_by(T.seq.desc()).limit(limit + 1)))
        if len(rows) > limit:
            return rows[:limit], str(rows[limit - 1].seq)
        return rows, None

    def summaries(
        self, *, limit: int, cursor: str | None, where: Any = None, scan: int | None = None
    ) -> tuple[builtins.list[Any], str | None]:
        """A page of `list` without the payloads: the short columns, and input, output and error
        cut to `SUMMARY_CHARS` (plus one character, to tell a cut text) in the database, so a page
        reads a few kB a trace however large the traces are.

        With `scan` and a condition, one page looks at no more than `scan` arrival numbers below
        the cursor, so a condition that matches few traces costs a bounded scan instead of the
        whole table; when that window ends before the oldest trace, the cursor given back
        continues below it (the page may then hold fewer than `limit` traces, even none)."""
        query = self._summary_select()
        before = decode_cursor(cursor)
        if before is not None:
            query = query.where(T.seq < before)
        floor = None
        if where is not None:
            query = query.where(where)
            if scan is not None:
                top = before if before is not None else self._edge_seq(newest=True) + 1
                floor = top - scan
                query = query.where(T.seq >= floor)
        rows = list(self.session.execute(query.order_by(T.seq.desc()).limit(limit + 1)))
        if len(rows) > limit:
            return rows[:limit], str(rows[limit - 1].seq)
        if floor is not None and floor > self._edge_seq(newest=False):
            return rows, str(floor)
        return rows, None

    def _summary_select(self) -> Any:
        """The project's traces as summary columns (texts cut in the database)."""
        cut = SUMMARY_CHARS + 1
        return self._columns(
            T,
            T.seq,
            T.id,
            T.created_at,
            T.version,
            T.edited,
            T.model,
            T.input_tokens,
            T.output_tokens,
            T.tokens,
            T.latency_ms,
            T.tags,
            T.meta,
            T.session_id,
            func.substr(T.error, 1, cut).label("error"),
            func.substr(T.input_text, 1, cut).label("input_text"),
            func.substr(T.output_text, 1, cut).label("output_text"),
        )

    def _edge_seq(self, *, newest: bool) -> int:
        """The arrival number of the project's newest (or oldest) trace; 0 without traces."""
        order = T.seq.desc() if newest else T.seq.asc()
        found = self.session.scalar(self._columns(T, T.seq).order_by(order).limit(1))
        return int(found or 0)

    def summaries_json(self, rows: builtins.list[Any]) -> builtins.list[dict[str, Any]]:
        """`summary_json` of each row, with the latest score and label of each criterion."""
        ids = [r.id for r in rows]
        scores, labels = self.latest_scores(ids), self.latest_labels(ids)
        return [summary_json(r, scores[r.id], labels[r.id]) for r in rows]

    def _latest(self, model: Any, trace_ids: builtins.list[str]) -> dict[str, dict[str, Any]]:
        """Per trace, the latest row of each criterion (max created_at, then max id)."""
        latest: dict[str, dict[str, Any]] = {t: {} for t in trace_ids}
        if not trace_ids:
            return latest
        query = (
            self._select(model)
            .where(model.trace_id.in_(trace_ids))
            .order_by(model.created_at, model.id)
        )
        for row in self.session.scalars(query):
            latest[row.trace_id][row.criterion] = row
        return latest

    def latest_scores(
        self, trace_ids: builtins.list[str]
    ) -> dict[str, dict[str, models.TraceScore]]:
        return self._latest(models.TraceScore, trace_ids)

    def latest_labels(
        self, trace_ids: builtins.list[str]
    ) -> dict[str, dict[str, models.TraceLabel]]:
        return self._latest(models.TraceLabel, trace_ids)

    def as_json(self, rows: builtins.list[models.LoggedTrace]) -> builtins.list[dict[str, Any]]:
        ids = [r.id for r in rows]
        scores, labels = self.latest_scores(ids), self.latest_labels(ids)
        return [
            trace_json(
                r,
                {c: outcome_json(s) for c, s in scores[r.id].items()},
                {c: label_json(lb) for c, lb in labels[r.id].items()},
            )
            for r in rows
        ]

    # -- edits ---------------------------------------------------------------------------------------
    def edit(
        self, trace_id: str, version: int, changes: dict[str, Any], editor: str
    ) -> models.LoggedTrace:
        """Apply `changes` if the trace is still at `version`; else 409 and nothing written. The row
        is locked for the check (PostgreSQL; SQLite's writers are serialised), and the revision's
        unique (trace, version) refuses a second edit of the same version in any case."""
        row = self.get(trace_id, lock=True)
        if row.version != version:
            raise ApiError(
                409,
                "conflict",
                f"trace {trace_id} was edited meanwhile: it is at version {row.version}, "
                f"your change was made to version {version}; read it again and redo the change",
            )
        self.session.add(
            models.TraceRevision(
                project_id=self.project_id,
                trace_id=row.id,
                version=row.version,
                snapshot=snapshot(row),
                edited_by=editor,
            )
        )
        before = part_of(row)
        for field, value in changes.items():
            setattr(row, "meta" if field == "metadata" else field, value)
            if field == "metadata":
                row.session_id = session_of(value)
            if field in ("input", "output"):
                setattr(row, f"{field}_text", flatten_text(value))
        row.version = version + 1
        row.edited = True
        deltas = Deltas(self.project_id)  # a metadata edit may change the trace's cost
        deltas.replace(before, part_of(row))
        deltas.write(self.session)
        self.session.flush()
        return row

    def revisions(self, trace_id: str) -> builtins.list[models.TraceRevision]:
        self.get(trace_id)
        query = self._select(models.TraceRevision).where(models.TraceRevision.trace_id == trace_id)
        return list(self.session.scalars(query.order_by(models.TraceRevision.version)))

    # -- scores and labels (append-only) -------------------------------------------------------------
    def add_label(
        self,
        trace_id: str,
        *,
        criterion: str,
        value: Any,
        author: str,
        queue_id: int | None = None,
        comment: str = "",
    ) -> models.TraceLabel:
        self.get(trace_id)
        row = models.TraceLabel(
            project_id=self.project_id,
            trace_id=trace_id,
            criterion=criterion,
            value=value,
            author=author,
            queue_id=queue_id,
            comment=comment,
        )
        self.session.add(row)
        self.session.flush()
        return row

    def add_scores(self, rows: builtins.list[dict[str, Any]]) -> None:
        """Append scores: each a dict of trace_id, criterion, value, outcome, source, queue_id."""
        if rows:
            now = datetime.now(timezone.utc)
            self.session.execute(
                insert_for(self.session, models.TraceScore.__table__).values(
                    [{"project_id": self.project_id, "created_at": now, **row} for row in rows]
                )
            )

    # -- to a dataset --------------------------------------------------------------------------------
    def to_dataset(self, trace_ids: builtins.list[str], name: str) -> dict[str, Any]:
        """Add the traces as examples (question = input text, answer = output text, contexts) to
        the dataset `name`: created, or given a new version holding its examples plus these. An
        example equal to one already there is not added twice."""
        found = {
            r.id: r for r in self.session.scalars(self._select(T).where(T.id.in_(set(trace_ids))))
        }
        examples, taken = [], set()
        for index, trace_id in enumerate(trace_ids):
            row = found.get(trace_id)
            if row is None:
                raise invalid(f"trace_ids[{index}]", f"no trace with id {trace_id} in this project")
            if trace_id in taken:
                continue
            taken.add(trace_id)
            try:
                example = ExampleIn(
                    question=row.input_text,
                    ground_truth_context=list(row.contexts or []),
                    ground_truth_answer=row.output_text,
                )
            except ValidationError as exc:
                problem = exc.errors()[0]
                field = ".".join(str(p) for p in problem["loc"])
                raise invalid(
                    f"trace_ids[{index}]",
                    f"trace {trace_id} cannot be an example: its {field} {problem['msg']}",
                ) from None
            examples.append(example.model_dump())
        datasets = DatasetRepo(self.session, self.project_id)
        dataset = datasets.by_name(name)
        if dataset is None:
            values = {
                "name": name,
                "source_type": "traces",
                "source_file": "",
                "examples": examples,
            }
            dataset, version = datasets.create(values)
            return {"dataset_id": dataset.id, "version": version.version, "added": len(examples)}
        current = [
            {
                "question": e.question,
                "ground_truth_context": e.ground_truth_context,
                "ground_truth_answer": e.ground_truth_answer,
            }
            for e in datasets.all_examples(datasets.version(dataset))
        ]
        seen = {json.dumps(e, sort_keys=True) for e in current}
        new = [e for e in examples if json.dumps(e, sort_keys=True) not in seen]
        values = {
            "name": dataset.name,
            "source_type": dataset.source_type,
            "source_file": dataset.source_file,
            "examples": current + new,
        }
        dataset, version, _changed = datasets.replace(dataset.id, values)
        return {"dataset_id": dataset.id, "version": version.version, "added": len(new)}

    def count(self, where: Any = None, *, most: int | None = None) -> int:
        """How many of the project's traces there are (matching `where`, a compiled condition).
        With `most`, counting stops past `most` (the answer is then `most + 1`), so the count of
        a condition many traces match reads only that many rows."""
        query = self._columns(T, T.seq)
        if where is not None:
            query = query.where(where)
        if most is not None:
            query = query.limit(most + 1)
        return int(self.session.scalar(select(func.count()).select_from(query.subquery())) or 0)

    def locked_by_id(self, trace_ids: builtins.list[str]) -> dict[str, models.LoggedTrace]:
        """The project's traces among `trace_ids`, by id, locked for update (in id order)."""
        query = self._select(T).where(T.id.in_(trace_ids)).order_by(T.id).with_for_update()
        return {r.id: r for r in self.session.scalars(query)}

    def score_keys(self, trace_ids: builtins.list[str]) -> set[tuple[str, str, str]]:
        """(trace id, criterion, source) of every score of `trace_ids`."""
        S = models.TraceScore
        query = self._columns(S, S.trace_id, S.criterion, S.source)
        return set(self.session.execute(query.where(S.trace_id.in_(trace_ids))).all())

    def existing_ids(self, trace_ids: set[str]) -> set[str]:
        """Which of `trace_ids` are traces of this project."""
        return set(self.session.scalars(self._columns(T, T.id).where(T.id.in_(trace_ids))))

    def score_history(self, trace_id: str) -> builtins.list[models.TraceScore]:
        """Every score of the trace, oldest first."""
        S = models.TraceScore
        query = self._select(S).where(S.trace_id == trace_id)
        return list(self.session.scalars(query.order_by(S.created_at, S.id)))

    def label_history(self, trace_id: str) -> builtins.list[models.TraceLabel]:
        """Every label of the trace, oldest first (labels are never changed or removed)."""
        L = models.TraceLabel
        query = self._select(L).where(L.trace_id == trace_id)
        return list(self.session.scalars(query.order_by(L.created_at, L.id)))


__all__ = ["TraceRepo"]
