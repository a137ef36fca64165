"""An experiment's generations as traces of the project: each cohort × example answer, with the
judge's scores, also stored as a logged trace, so the trace explorer opens it, filters it
(`metadata.experiment_id = 7 AND metadata.cohort = 'terse'`) and acts on it like any other
(labels, review queues and their output editor, adding it to a dataset).

The experiment's own rows (`traces`, `scores`) stay what its results are computed from; the
logged trace is a copy made when the worker stores a generation (`ExperimentRepo.store_traces`)
and its scores (`store_scores`), or, for an experiment stored before this existed (or seeded
directly, as the demo is), when its traces are first opened from its pages (`publish_all`). A
label or an edit made on the logged trace does not change the experiment's results.

The logged trace's id is derived from (project, experiment, cohort, example), so publishing is
idempotent: a generation published twice, or by two requests at once, is stored once (the
ingest's ON CONFLICT DO NOTHING), and the experiment pages can link to it without a lookup.
Generated traces are not routed to review queues or online evaluators at ingest (that is the
API's ingest route); they carry the tag `experiment` and `metadata.source = 'experiment'`, so a
condition can keep them out of the trace explorer (`NOT 'experiment' IN tags`).

They are not production traffic: the logged row's `experiment_id` column says whose generation
it is (set here, at ingest, and never by a client or an edit), so the dashboard's figures and
its hourly rollups leave them out (the rollups never count them: `rollups.Part.experiment`),
and so does an online evaluator's backfill; `GET /api/v1/dashboard?include_experiments=true`
counts them, read from the traces.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import timedelta, timezone
from typing import Any

from sqlalchemy import tuple_

from assay.platform.server.schemas.traces import SpanIn, TraceIn, Usage
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped
from assay.platform.server.storage.traces import TraceRepo

TAG = "experiment"
_NAMESPACE = uuid.UUID("6c3f2a52-6f0b-4c4e-9d7e-2f1b0e5a9c41")  # assay's, for these ids only
CHUNK = 500


def logged_id(project_id: int, experiment_id: int, cohort_id: int, example_id: int) -> str:
    """The id of the logged trace of one generation (the same on every call)."""
    name = f"{project_id}/{experiment_id}/{cohort_id}/{example_id}"
    return str(uuid.uuid5(_NAMESPACE, name))


def condition_for(experiment_id: int, cohort: str | None = None) -> str:
    """The trace explorer's condition for an experiment's traces (one cohort's, if named)."""
    text = f"metadata.experiment_id = {int(experiment_id)}"
    if cohort is not None:
        quoted = cohort.replace("'", "''")  # the language's one escape: a quote doubled
        text += f" AND metadata.cohort = '{quoted}'"
    return text


class ExperimentTraces(ProjectScoped):
    """Publishes one project's experiment generations as logged traces."""

    def trace_id_of(self, trace: models.Trace) -> str:
        return logged_id(
            self.project_id, trace.experiment_id or 0, trace.cohort_id or 0, trace.example_id or 0
        )

    def generation(self, experiment: models.Experiment, trace_id: int) -> models.Trace | None:
        """One generation of the experiment (None: not one of its own)."""
        return self.session.scalar(
            self._select(models.Trace).where(
                models.Trace.experiment_id == experiment.id, models.Trace.id == trace_id
            )
        )

    def publish(self, experiment: models.Experiment, traces: Iterable[models.Trace]) -> set[int]:
        """Store the logged trace of each generation not published yet, with every score its
        generation has; returns the ids (of `traces` rows) published now."""
        traces = list(traces)
        if not traces:
            return set()
        repo = TraceRepo(self.session, self.project_id)
        cohorts = {c.id: c for c in self._cohorts(experiment)}
        positions = dict(
            self.session.execute(
                self._columns(models.Example, models.Example.id, models.Example.position).where(
                    models.Example.id.in_({t.example_id for t in traces})
                )
            ).all()
        )
        ingested: set[str] = set()
        for start in range(0, len(traces), CHUNK):
            chunk = traces[start : start + CHUNK]
            stored, _dupes = repo.ingest(
                [self._trace_in(experiment, t, cohorts, positions) for t in chunk],
                experiment_id=experiment.id,
            )
            ingested.update(stored)
        fresh = [t for t in traces if self.trace_id_of(t) in ingested]
        if fresh:
            scores = self.session.scalars(
                self._select(models.Score).where(models.Score.trace_id.in_([t.id for t in fresh]))
            )
            self._mirror_scores(experiment, fresh, list(scores))
        return {t.id for t in fresh}

    def publish_all(self, experiment: models.Experiment) -> int:
        """Publish every generation of the experiment that is not yet (an experiment run before
        generations were published, or seeded directly); returns how many were."""
        traces = list(
            self.session.scalars(
                self._select(models.Trace)
                .where(models.Trace.experiment_id == experiment.id)
                .order_by(models.Trace.id)
            )
        )
        repo, missing = TraceRepo(self.session, self.project_id), []
        for start in range(0, len(traces), CHUNK):
            chunk = traces[start : start + CHUNK]
            have = repo.existing_ids({self.trace_id_of(t) for t in chunk})
            missing += [t for t in chunk if self.trace_id_of(t) not in have]
        return len(self.publish(experiment, missing))

    def scores_stored(self, experiment: models.Experiment, keys: Iterable[tuple[int, int]]) -> None:
        """Mirror the scores just stored, (trace id, criterion key) each, onto the logged traces
        (publishing a generation first if it was not yet: then with all of its scores)."""
        keys = set(keys)
        if not keys:
            return
        traces = list(
            self.session.scalars(
                self._select(models.Trace).where(models.Trace.id.in_({k[0] for k in keys}))
            )
        )
        published_now = self.publish(experiment, traces)
        older = [t for t in traces if t.id not in published_now]
        if not older:
            return
        scores = self.session.scalars(
            self._select(models.Score).where(
                tuple_(models.Score.trace_id, models.Score.criteria_key).in_(
                    [k for k in keys if k[0] in {t.id for t in older}]
                )
            )
        )
        self._mirror_scores(experiment, older, list(scores))

    # -- building rows -----------------------------------------------------------------------------
    def _cohorts(self, experiment: models.Experiment) -> list[models.ExperimentCohort]:
        return list(
            self.session.scalars(
                self._select(models.ExperimentCohort).where(
                    models.ExperimentCohort.experiment_id == experiment.id
                )
            )
        )

    def _trace_in(
        self,
        experiment: models.Experiment,
        trace: models.Trace,
        cohorts: dict[int, models.ExperimentCohort],
        positions: dict[int, int],
    ) -> TraceIn:
        """The logged trace of one generation, built from stored rows (so not validated again:
        its values were the worker's)."""
        cohort = cohorts.get(trace.cohort_id or 0)
        ended = trace.created_at
        if ended.tzinfo is None:
            ended = ended.replace(tzinfo=timezone.utc)
        started = ended - timedelta(milliseconds=trace.latency_ms or 0.0)
        error = None
        if trace.error_type is not None:
            error = f"{trace.error_type}: {trace.error_message or ''}".strip()
        metadata = {
            **(trace.meta or {}),
            "source": "experiment",
            "experiment": experiment.name,
            "experiment_id": experiment.id,
            "cohort": cohort.name if cohort else None,
            "example": positions.get(trace.example_id or 0),
        }
        span = SpanIn.model_validate(
            {
                "id": "generation",
                "name": f"{cohort.name if cohort else 'cohort'}: generation",
                "kind": "other" if (trace.model or "").startswith("pipeline:") else "llm",
                "started_at": started,
                "ended_at": ended,
                "input": trace.raw_input,
                "output": trace.output,
                "error": error[:4000] if error else None,
            }
        )
        return TraceIn.model_construct(
            id=self.trace_id_of(trace),
            created_at=ended,
            input=trace.input,
            output=trace.output,
            raw_input=trace.raw_input,
            raw_output=trace.raw_output,
            contexts=[str(c) for c in trace.contexts or []],
            metadata=metadata,
            model=(trace.model or "")[:200] or None,
            usage=Usage.model_construct(
                input_tokens=trace.input_tokens, output_tokens=trace.output_tokens
            ),
            latency_ms=trace.latency_ms,
            error=error,
            tags=[TAG],
            spans=[span],
        )

    def _mirror_scores(
        self,
        experiment: models.Experiment,
        traces: list[models.Trace],
        scores: list[models.Score],
    ) -> None:
        ids = {t.id: self.trace_id_of(t) for t in traces}
        criteria = {c["key"]: c for c in experiment.criteria}
        rows = []
        for score in scores:
            if score.trace_id not in ids:
                continue
            criterion = criteria.get(score.criteria_key, {})
            if criterion.get("criteria_type") == "function":
                source = f"experiment {experiment.id} function:{score.criteria_name}"
            else:
                source = f"experiment {experiment.id} judge:{experiment.judge_model or 'default'}"
            outcome: dict[str, Any]
            if score.status == "error":
                outcome = {
                    "status": "error",
                    "error_type": score.error_type,
                    "error_message": score.error_message,
                }
            else:
                outcome = {"status": score.status, "value": score.value, "reason": score.reason}
            rows.append(
                {
                    "trace_id": ids[score.trace_id],
                    "criterion": score.criteria_name,
                    "value": score.value if score.status == "ok" else None,
                    "outcome": outcome,
                    "source": source[:1000],
                    "queue_id": None,
                }
            )
        repo = TraceRepo(self.session, self.project_id)
        for start in range(0, len(rows), 200):
            repo.add_scores(rows[start : start + 200])


__all__ = ["TAG", "ExperimentTraces", "condition_for", "logged_id"]
