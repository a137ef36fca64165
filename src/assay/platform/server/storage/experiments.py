"""Experiments: submission (snapshot + job), cancel and resume. The reads (progress with the ETA,
summary, rows) are `experiment_reports.ExperimentReports`, which `ExperimentRepo` extends; its
names are re-exported here.

Cancel and resume: `cancel` marks the job and the experiment `cancelled` in one transaction; the
worker running it writes nothing after that commits (its claim check sees the job cancelled) and
stops at its next store or heartbeat. What was stored stays: the results are partial and say so
(`coverage`, `progress.pending`). `resume` queues a cancelled or failed experiment again; the worker
skips every stored trace and score, so the final results equal an uninterrupted run's.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select, tuple_, update

from assay.platform import criteria_rules
from assay.platform.server.errors import ApiError, conflict, invalid, not_found
from assay.platform.server.schemas.model_names import check_model
from assay.platform.server.storage import models
from assay.platform.server.storage.experiment_reports import (
    ExperimentReports,
    experiment_json,
    score_json,
)
from assay.platform.server.storage.experiment_traces import ExperimentTraces
from assay.platform.server.storage.pipelines import PipelineRepo
from assay.platform.server.storage.repos import CriteriaRepo, DatasetRepo, TaskRepo
from assay.platform.server.storage.trace_rows import insert_for

MAX_UNITS = 50_000  # cohorts × examples of one experiment
FINISHED = frozenset({"completed", "failed", "cancelled"})
RESUMABLE = frozenset({"cancelled", "failed"})


class ExperimentRepo(ExperimentReports):
    """Submission, cancel and resume, on top of the reads of `ExperimentReports`."""

    # -- submission --------------------------------------------------------------------------------
    def submit(self, body: dict[str, Any]) -> models.Experiment:
        datasets, tasks, criteria = (
            DatasetRepo(self.session, self.project_id),
            TaskRepo(self.session, self.project_id),
            CriteriaRepo(self.session, self.project_id),
        )
        dataset = datasets.get(body["dataset_id"])
        version = datasets.version(dataset, body.get("dataset_version"))
        task = tasks.get(body["task_id"])
        names: set[str] = set()
        for index, cohort in enumerate(body["cohorts"]):
            if (cohort.get("generator_model") is None) == (cohort.get("rag_pipeline") is None):
                raise invalid(
                    f"cohorts[{index}].generator_model",
                    "give exactly one of generator_model or rag_pipeline",
                )
            if cohort.get("rag_pipeline") is not None:
                PipelineRepo(self.session, self.project_id).check_cohort(
                    cohort["rag_pipeline"], f"cohorts[{index}].rag_pipeline"
                )
            if cohort["name"] in names:
                raise invalid(f"cohorts[{index}].name", f"two cohorts are named {cohort['name']!r}")
            names.add(cohort["name"])
        if len(set(body["criteria_ids"])) != len(body["criteria_ids"]):
            raise invalid("criteria_ids", "a criterion is listed twice")
        snapshots = []
        for key, ident in enumerate(body["criteria_ids"]):
            row = criteria.get(ident)
            snapshots.append(
                {"key": key, "id": row.id, **{f: getattr(row, f) for f in criteria_rules.FIELDS}}
            )
        if version.example_count == 0:
            raise invalid(
                "dataset_id", f"dataset {dataset.name!r} version {version.version} has no examples"
            )
        if version.example_count * len(body["cohorts"]) > MAX_UNITS:
            raise invalid("cohorts", f"examples × cohorts is over the limit of {MAX_UNITS}")
        experiment = models.Experiment(
            project_id=self.project_id,
            name=body["name"],
            dataset_id=dataset.id,
            dataset_version_id=version.id,
            dataset_version=version.version,
            judge_model=body.get("judge_model") or "",
            task={
                "id": task.id,
                "name": task.name,
                "generator_model": task.generator_model,
                "system_prompt": task.system_prompt,
            },
            criteria=snapshots,
            status="queued",
        )
        self.session.add(experiment)
        self.session.flush()
        self.session.add_all(
            models.ExperimentCohort(
                project_id=self.project_id,
                experiment_id=experiment.id,
                position=position,
                name=c["name"],
                generator_model=c.get("generator_model"),
                rag_pipeline=c.get("rag_pipeline"),
                system_prompt=c.get("system_prompt"),
            )
            for position, c in enumerate(body["cohorts"])
        )
        self.session.add(
            models.Job(
                project_id=self.project_id,
                kind="experiment",
                experiment_id=experiment.id,
                status="queued",
            )
        )
        self.session.flush()
        return experiment

    def submit_checked(self, body: dict[str, Any]) -> models.Experiment:
        """`submit`, then the models checked as the experiment recorded them (the task's model
        where a cohort's is '', the judge when a criterion is judged): a model this server could
        never ask is a 422 naming its field, and the caller's transaction rolls the submission
        back whole. The API's POST /experiments and the web UI's form both submit here."""
        experiment = self.submit(body)
        for index, cohort in enumerate(body["cohorts"]):
            if cohort.get("generator_model"):
                check_model(f"cohorts[{index}].generator_model", cohort["generator_model"])
            elif cohort.get("generator_model") is not None:  # '' falls back to the task's model
                check_model("task.generator_model", experiment.task["generator_model"])
        if any(c["criteria_type"] == "llm_judge" for c in experiment.criteria):
            check_model("judge_model", body.get("judge_model") or "")
        return experiment

    def start_segment(self, experiment: models.Experiment) -> None:
        """A worker starts running the experiment (first time, or again after a resume, a restart
        or a takeover): a new run segment, from which the ETA's rate is counted."""
        now = datetime.now(timezone.utc)
        if experiment.started_at is None:
            experiment.started_at = now
        experiment.run_started_at = now
        experiment.status = "running"

    # -- cancel and resume ---------------------------------------------------------------------------
    def _lock(self, experiment_id: int) -> models.Experiment:
        """The experiment, with its job rows and then its own row locked on PostgreSQL (SQLite's
        BEGIN IMMEDIATE serialises every write already). Jobs first, as the worker does (it
        locks its job, then writes rows that point at the experiment): one order, no deadlock."""
        postgres = self.session.get_bind().dialect.name == "postgresql"
        jobs = (
            select(models.Job.id)
            .where(
                models.Job.project_id == self.project_id,
                models.Job.kind == "experiment",
                models.Job.experiment_id == experiment_id,
            )
            .order_by(models.Job.id)
        )
        query = self._select(models.Experiment).where(models.Experiment.id == experiment_id)
        if postgres:
            self.session.execute(jobs.with_for_update()).all()
            query = query.with_for_update(key_share=True)  # FOR NO KEY UPDATE
        row = self.session.scalar(query)
        if row is None:
            raise not_found("experiment", experiment_id)
        return row

    def cancel(self, experiment_id: int) -> models.Experiment:
        experiment = self._lock(experiment_id)
        if experiment.status in FINISHED:
            raise conflict(
                f"experiment {experiment.id} is already {experiment.status}: there is nothing "
                "to cancel"
                + (" (resume it with POST …/resume)" if experiment.status in RESUMABLE else "")
            )
        now = datetime.now(timezone.utc)
        self.session.execute(
            update(models.Job)
            .where(
                models.Job.project_id == self.project_id,
                models.Job.kind == "experiment",
                models.Job.experiment_id == experiment.id,
                models.Job.status.in_(("queued", "running")),
            )
            .values(status="cancelled", finished_at=now, error="cancelled")
        )
        experiment.status, experiment.finished_at, experiment.error = "cancelled", now, None
        self.session.flush()
        return experiment

    def resume(self, experiment_id: int) -> models.Experiment:
        experiment = self._lock(experiment_id)
        if experiment.status not in RESUMABLE:
            why = (
                "it has completed"
                if experiment.status == "completed"
                else f"it is {experiment.status} (not cancelled or failed)"
            )
            raise conflict(f"experiment {experiment.id} cannot be resumed: {why}")
        reset = {
            "status": "queued",
            "claimed_by": None,
            "heartbeat_at": None,
            "error": None,
            "finished_at": None,
        }
        job = self.session.scalar(
            select(models.Job)
            .where(
                models.Job.project_id == self.project_id,
                models.Job.kind == "experiment",
                models.Job.experiment_id == experiment.id,
            )
            .order_by(models.Job.id.desc())
            .limit(1)
        )
        if job is None:  # not made by this server's submit; give it one
            self.session.add(
                models.Job(
                    project_id=self.project_id,
                    kind="experiment",
                    experiment_id=experiment.id,
                    status="queued",
                )
            )
        else:
            for name, value in reset.items():
                setattr(job, name, value)
        experiment.status, experiment.error, experiment.finished_at = "queued", None, None
        self.session.flush()
        return experiment

    # -- the worker's writes (jobs.run) ------------------------------------------------------------
    def store_traces(self, values: list[dict[str, Any]]) -> None:
        """Insert generated traces of this project (one per experiment, cohort and example: one
        stored already is kept)."""
        rows = [{**v, "project_id": self.project_id} for v in values]
        self.session.execute(
            insert_for(self.session, models.Trace.__table__)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["experiment_id", "cohort_id", "example_id"])
        )
        # each generation is also a trace of the project (experiment_traces.py)
        for experiment_id in {r["experiment_id"] for r in rows}:
            experiment = self.get(experiment_id)
            keys = [(r["cohort_id"], r["example_id"]) for r in rows]
            stored = self.session.scalars(
                self._select(models.Trace).where(
                    models.Trace.experiment_id == experiment_id,
                    tuple_(models.Trace.cohort_id, models.Trace.example_id).in_(keys),
                )
            )
            ExperimentTraces(self.session, self.project_id).publish(experiment, stored)

    def store_scores(self, values: list[dict[str, Any]]) -> None:
        """Insert scores of this project's traces (one per trace and criterion: one stored
        already is kept)."""
        rows = [{**v, "project_id": self.project_id} for v in values]
        table = models.Score.__table__
        inserted = self.session.execute(
            insert_for(self.session, table)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["trace_id", "criteria_key"])
            .returning(table.c.experiment_id, table.c.trace_id, table.c.criteria_key)
        ).all()
        # and onto the generations' logged traces (only the rows stored now: never twice)
        for experiment_id in {row[0] for row in inserted}:
            ExperimentTraces(self.session, self.project_id).scores_stored(
                self.get(experiment_id), [(r[1], r[2]) for r in inserted if r[0] == experiment_id]
            )


__all__ = [
    "FINISHED",
    "MAX_UNITS",
    "RESUMABLE",
    "ApiError",
    "ExperimentRepo",
    "ExperimentReports",
    "experiment_json",
    "score_json",
]
