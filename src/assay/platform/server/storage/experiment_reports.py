"""Reading experiments: the stored objects of one experiment, its progress (with the ETA), its
summary per cohort × criterion and its rows. Everything is read from the stored traces and scores,
so a resumed experiment reports exactly what an uninterrupted one would.

Units of progress are score cells: cohorts × examples × criteria. A cell is `completed` when its
criterion gave a value or skipped the row, `failed` when it ended in a typed error (a failed
generation fails all of its row's cells).

The ETA is the remaining cells at the rate of the current run segment: the cells stored since the
worker last started the run (`run_started_at`: a claim after a submit, a resume, a restart or a
takeover) over the time since then. A paused or crashed stretch therefore does not slow the ETA
down, and a queued experiment (waiting for a worker) has none.

Submitting, cancelling and resuming are `experiments.ExperimentRepo`, which adds them to these
reads.
"""

from __future__ import annotations

import builtins
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select

from assay.platform.server.errors import not_found
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped, iso


class ExperimentReports(ProjectScoped):
    """The reads of one project's experiments; `ExperimentRepo` adds the writes."""

    def get(self, ident: int) -> models.Experiment:
        row = self.session.scalar(
            self._select(models.Experiment).where(models.Experiment.id == ident)
        )
        if row is None:
            raise not_found("experiment", ident)
        return row

    def list(
        self, *, name: str | None, limit: int, cursor: str | None
    ) -> tuple[builtins.list[models.Experiment], str | None]:
        query = self._select(models.Experiment)
        if name is not None:
            query = query.where(models.Experiment.name == name)
        return self._page(query, models.Experiment, limit, cursor)

    def cohorts(self, experiment: models.Experiment) -> builtins.list[models.ExperimentCohort]:
        return list(
            self.session.scalars(
                self._select(models.ExperimentCohort)
                .where(models.ExperimentCohort.experiment_id == experiment.id)
                .order_by(models.ExperimentCohort.position)
            )
        )

    def examples(self, experiment: models.Experiment) -> builtins.list[models.Example]:
        return list(
            self.session.scalars(
                self._select(models.Example)
                .where(models.Example.dataset_version_id == experiment.dataset_version_id)
                .order_by(models.Example.position)
            )
        )

    def traces(self, experiment: models.Experiment) -> builtins.list[models.Trace]:
        return list(
            self.session.scalars(
                self._select(models.Trace)
                .where(models.Trace.experiment_id == experiment.id)
                .order_by(models.Trace.id)
            )
        )

    def scores(self, experiment: models.Experiment) -> builtins.list[models.Score]:
        return list(
            self.session.scalars(
                self._select(models.Score).where(models.Score.experiment_id == experiment.id)
            )
        )

    # -- reading -------------------------------------------------------------------------------------
    def progress(self, experiment: models.Experiment) -> dict[str, Any]:
        cohorts = int(
            self.session.scalar(
                select(func.count())
                .select_from(models.ExperimentCohort)
                .where(
                    models.ExperimentCohort.project_id == self.project_id,
                    models.ExperimentCohort.experiment_id == experiment.id,
                )
            )
            or 0
        )
        examples = int(
            self.session.scalar(
                select(models.DatasetVersion.example_count).where(
                    models.DatasetVersion.project_id == self.project_id,
                    models.DatasetVersion.id == experiment.dataset_version_id,
                )
            )
            or 0
        )
        total = cohorts * examples * len(experiment.criteria)
        counts = dict(
            self.session.execute(
                select(models.Score.status, func.count())
                .where(
                    models.Score.project_id == self.project_id,
                    models.Score.experiment_id == experiment.id,
                )
                .group_by(models.Score.status)
            ).all()
        )
        completed = int(counts.get("ok", 0)) + int(counts.get("skipped", 0))
        failed = int(counts.get("error", 0))
        done = completed + failed
        eta: float | None = None
        if done >= total:
            eta = 0.0
        elif experiment.status == "running":  # else queued, cancelled or failed: no rate to use
            eta = self._eta(experiment, done, total)
        return {
            "id": experiment.id,
            "status": experiment.status,
            "total": total,
            "completed": completed,
            "failed": failed,
            "pending": max(0, total - done),
            "percent": round(100.0 * done / total, 1) if total else 100.0,
            "eta_s": eta,
            "error": experiment.error,
        }

    def _eta(self, experiment: models.Experiment, done: int, total: int) -> float | None:
        """Seconds left at the current segment's rate; None until the segment has stored a cell.
        An experiment that has not run since migration 0006 has no segment start: its rate counts
        from its first start, as before."""
        now = datetime.now(timezone.utc)
        segment = _aware(experiment.run_started_at)
        if segment is None:
            start, stored = _aware(experiment.started_at), done
        else:
            start = segment
            stored = int(
                self.session.scalar(
                    select(func.count())
                    .select_from(models.Score)
                    .where(
                        models.Score.project_id == self.project_id,
                        models.Score.experiment_id == experiment.id,
                        models.Score.created_at >= segment,
                    )
                )
                or 0
            )
        if start is None or stored <= 0:
            return None
        elapsed = (now - start).total_seconds()
        return round(max(0.0, elapsed / stored * (total - done)), 1)

    def summary(self, experiment: models.Experiment) -> dict[str, Any]:
        """Per cohort × criterion: mean, n, n_scored, coverage and a 95% bootstrap interval."""
        from assay.schema.aggregate import aggregate, bootstrap_mean_ci

        cohorts = self.cohorts(experiment)
        examples = self.examples(experiment)
        traces = {(t.cohort_id, t.example_id): t.id for t in self.traces(experiment)}
        values: dict[tuple[int, int], float | None] = {}
        for score in self.scores(experiment):
            values[(score.trace_id, score.criteria_key)] = (
                score.value if score.status == "ok" else None
            )
        table = []
        for cohort in cohorts:
            for criterion in experiment.criteria:
                cells = [
                    values.get((traces.get((cohort.id, e.id), -1), criterion["key"]))
                    for e in examples
                ]
                stats = aggregate(cells)
                scored = [v for v in cells if v is not None]
                interval = None
                if len(scored) >= 2:
                    low, high = bootstrap_mean_ci(scored)
                    interval = [round(low, 6), round(high, 6)]
                elif len(scored) == 1:
                    interval = [scored[0], scored[0]]
                table.append(
                    {
                        "cohort": cohort.name,
                        "criterion": criterion["name"],
                        "mean": None if stats.mean is None else round(stats.mean, 6),
                        "n": stats.n_rows,
                        "n_scored": stats.n_scored,
                        "coverage": round(stats.coverage, 6),
                        "ci95": interval,
                    }
                )
        return {**experiment_json(experiment, cohorts), "summary": table}

    def rows(
        self, experiment: models.Experiment, *, limit: int, cursor: str | None
    ) -> tuple[builtins.list[dict[str, Any]], str | None]:
        query = self._select(models.Trace).where(models.Trace.experiment_id == experiment.id)
        traces, next_cursor = self._page(query, models.Trace, limit, cursor)
        if not traces:
            return [], next_cursor
        cohorts = {c.id: c for c in self.cohorts(experiment)}
        examples = {
            e.id: e
            for e in self.session.scalars(
                self._select(models.Example).where(
                    models.Example.id.in_([t.example_id for t in traces])
                )
            )
        }
        scores: dict[int, builtins.list[models.Score]] = {}
        for score in self.session.scalars(
            self._select(models.Score).where(models.Score.trace_id.in_([t.id for t in traces]))
        ):
            scores.setdefault(score.trace_id, []).append(score)
        names = {c["key"]: c["name"] for c in experiment.criteria}
        out = []
        for trace in traces:
            cohort, example = cohorts.get(trace.cohort_id), examples.get(trace.example_id)
            cells: dict[str, Any] = {}
            for score in sorted(scores.get(trace.id, []), key=lambda s: s.criteria_key):
                cells[names.get(score.criteria_key, score.criteria_name)] = score_json(score)
            out.append(
                {
                    "trace_id": trace.id,
                    "cohort": cohort.name if cohort else None,
                    "cohort_position": cohort.position if cohort else None,
                    "example_id": trace.example_id,
                    "position": example.position if example else None,
                    "question": example.question if example else trace.input,
                    "ground_truth_answer": example.ground_truth_answer if example else None,
                    "answer": trace.output,
                    "contexts": trace.contexts,
                    "model": trace.model,
                    "generation_error": None
                    if trace.error_type is None
                    else {"type": trace.error_type, "message": trace.error_message},
                    "scores": cells,
                }
            )
        return out, next_cursor


def _aware(moment: datetime | None) -> datetime | None:
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment


def score_json(score: models.Score) -> dict[str, Any]:
    if score.status == "ok":
        return {"status": "ok", "value": score.value, "reason": score.reason}
    if score.status == "skipped":
        return {"status": "skipped", "reason": score.reason}
    return {"status": "error", "error_type": score.error_type, "message": score.error_message}


def experiment_json(
    experiment: models.Experiment, cohorts: builtins.list[models.ExperimentCohort]
) -> dict[str, Any]:
    return {
        "object_type": "experiment",
        "id": experiment.id,
        "name": experiment.name,
        "status": experiment.status,
        "error": experiment.error,
        "dataset": {"id": experiment.dataset_id, "version": experiment.dataset_version},
        "task": experiment.task,
        "judge_model": experiment.judge_model,
        "cohorts": [
            {
                "name": c.name,
                "generator_model": c.generator_model,
                "rag_pipeline": c.rag_pipeline,
                "system_prompt": c.system_prompt,
            }
            for c in cohorts
        ],
        "criteria": [c["name"] for c in experiment.criteria],
        "created_at": iso(experiment.created_at),
        "started_at": iso(experiment.started_at),
        "run_started_at": iso(experiment.run_started_at),
        "finished_at": iso(experiment.finished_at),
    }


__all__ = ["ExperimentReports", "experiment_json", "score_json"]
