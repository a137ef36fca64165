"""One experiment job, run by a worker that holds its claim: what is missing is made and stored.

It loads the experiment (its cohorts, examples, task, criteria and what is already stored), then
per chunk of about `CHUNK` cohort × example units generates the missing answers
(`generation.py`), stores each as a trace, judges the missing cells of each criterion
(`judging.py`) and stores each typed outcome in `scores`. Units go example by example, every
cohort's answer to an example in the same chunk, so a run stopped half-way (cancelled, or a
model down) has judged the cohorts on the same examples and its partial results compare.
Inserts ignore rows already there, so a resumed run (after a stop, a cancel and resume, or a
dead worker's stale claim) skips what was stored, and the model layer's response cache answers
any call that was made but not stored: nothing is generated or judged twice.

Every model the run asks goes through its `Gate` (`calls.py`): bounded retries, and a model
that keeps failing is down for the rest of the run. Its cells are left undone (not stored as
errors) while the rest of the experiment goes on, and the run ends with `ModelsDown` so that the
worker fails the job in one line and moves on; a resume does what was left.

Every write checks the claim in its own transaction (`job_claims.claim_lost`), so nothing is
stored once the job was cancelled or taken over. The worker stops a run by cancelling its asyncio
task; the writes are synchronous between awaits, so none is cut in half.

Separate from `worker.py`, which owns the threads and the job's lifecycle and also runs other
kinds of job (`review_judge.py`) through the same `run()` interface.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any

from assay.platform.server.jobs.calls import GatedRun, not_answered
from assay.platform.server.jobs.claims import Claim
from assay.platform.server.jobs.generation import GATE_KEY, Generator, Unit
from assay.platform.server.jobs.judging import judge_cells
from assay.platform.server.storage import models
from assay.platform.server.storage.experiments import ExperimentRepo
from assay.platform.server.storage.pipelines import PipelineRepo

CHUNK = 16


class ExperimentRun(GatedRun):
    """`run`: True when every cell is stored; False when asked to stop first; `ModelsDown` when
    cells were left undone because a model did not answer."""

    left = "cell(s) were left undone: resume the experiment once the model answers"

    def __init__(self, state: Any, claim: Claim, *args: Any, **options: Any) -> None:
        """As `GatedRun`'s (`should_stop`, then `owner=` and `policy=`), for an experiment's job."""
        if claim.experiment_id is None:
            raise ValueError(f"job {claim.job_id} is not an experiment's ({claim.kind})")
        # one model object per model string for the whole run (generators and judge share),
        # each with the gate's retries and its watch on models that are down
        super().__init__(state, claim, *args, **options)
        self.experiment_id: int = claim.experiment_id
        self.gate = self.models.gate
        self._llm = self.models.llm
        self._generator: Generator | None = None  # made once the run knows the pipelines

    async def run(self) -> bool:
        try:
            return await super().run()
        finally:
            if self._generator is not None:
                await self._generator.aclose()

    async def _run(self) -> bool:
        with self.state.transaction() as session:
            self._check_claim(session)  # cancelled between the claim and now: leave it so
            repo = ExperimentRepo(session, self.claim.project_id)
            experiment = repo.get(self.experiment_id)
            repo.start_segment(experiment)  # running; the ETA's rate counts from now
            cohorts, examples = repo.cohorts(experiment), repo.examples(experiment)
            task, criteria, judge_model = (
                dict(experiment.task),
                list(experiment.criteria),
                experiment.judge_model,
            )
            traces = {(t.cohort_id, t.example_id): t for t in repo.traces(experiment)}
            scored = {(s.trace_id, s.criteria_key) for s in repo.scores(experiment)}
            pipelines = {
                p.name: (p.url, p.timeout_s)
                for p in PipelineRepo(session, self.claim.project_id).all()
            }
        generator = self._generator = Generator(self.claim, self._llm, pipelines, self.gate)
        judge = None
        if any(c["criteria_type"] == "llm_judge" for c in criteria):
            judge = self._llm(judge_model)
        for chunk in chunks(cohorts, examples):
            if self.should_stop():
                return False
            missing = [u for u in chunk if (u.cohort.id, u.example.id) not in traces]
            if missing:
                made = await asyncio.gather(*(generator.generate(task, u) for u in missing))
                generated = [row for row in made if row is not None and self._kept(row)]
                self.gate.skipped += (len(made) - len(generated)) * max(len(criteria), 1)
                if generated:
                    traces.update(self._store_traces(generated))
            chunk_traces = [
                (u, traces[(u.cohort.id, u.example.id)])
                for u in chunk
                if (u.cohort.id, u.example.id) in traces
            ]
            for criterion in criteria:
                todo = [(u, t) for u, t in chunk_traces if (t.id, criterion["key"]) not in scored]
                if not todo:
                    continue
                asks_judge = criterion["criteria_type"] == "llm_judge"
                if asks_judge and self.gate.is_down(judge_model):
                    self.gate.skipped += len(todo)
                    continue
                outcomes = await judge_cells(criterion, todo, judge)
                if asks_judge and self.gate.is_down(judge_model):  # went down meanwhile
                    outcomes = [o for o in outcomes if not _left_for_later(o)]
                    self.gate.skipped += len(todo) - len(outcomes)
                if outcomes:
                    self._store_scores(criterion, outcomes)
                scored.update((o["trace"].id, criterion["key"]) for o in outcomes)
        return True

    def _kept(self, row: dict[str, Any]) -> bool:
        """False for a failed row of a model that went down meanwhile (left for a resume)."""
        down_if = row.pop(GATE_KEY, None)
        return down_if is None or not self.gate.is_down(down_if)

    def _store_traces(
        self, rows: list[dict[str, Any]]
    ) -> dict[tuple[int | None, int | None], models.Trace]:
        values = [
            {("metadata" if k == "meta" else k): v for k, v in row.items()}
            | {"created_at": datetime.now(timezone.utc)}
            for row in rows
        ]
        with self.state.transaction() as session:
            self._check_claim(session)
            experiments = ExperimentRepo(session, self.claim.project_id)
            experiments.store_traces(values)
            stored = experiments.traces(experiments.get(self.experiment_id))
        wanted = {(r["cohort_id"], r["example_id"]) for r in rows}
        return {
            (t.cohort_id, t.example_id): t for t in stored if (t.cohort_id, t.example_id) in wanted
        }

    def _store_scores(self, criterion: dict[str, Any], outcomes: list[dict[str, Any]]) -> None:
        now = datetime.now(timezone.utc)
        values = [
            {
                "project_id": self.claim.project_id,
                "experiment_id": self.claim.experiment_id,
                "trace_id": o["trace"].id,
                "criteria_key": criterion["key"],
                "criteria_name": criterion["name"],
                "source": "function" if criterion["criteria_type"] == "function" else "judge",
                "status": o["status"],
                "value": o.get("value"),
                "reason": o.get("reason"),
                "error_type": o.get("error_type"),
                "error_message": o.get("error_message"),
                "created_at": now,
            }
            for o in outcomes
        ]
        with self.state.transaction() as session:
            self._check_claim(session)
            ExperimentRepo(session, self.claim.project_id).store_scores(values)


def chunks(cohorts: list[Any], examples: list[Any]) -> list[list[Unit]]:
    """The run's units in chunks of about `CHUNK`: example after example, each with every cohort,
    and never one example's cohorts split over two chunks."""
    per_chunk = max(1, CHUNK // max(len(cohorts), 1))
    return [
        [Unit(c, e) for e in examples[start : start + per_chunk] for c in cohorts]
        for start in range(0, len(examples), per_chunk)
    ]


def _left_for_later(outcome: dict[str, Any]) -> bool:
    """A judged cell whose judge did not answer: not stored, so a resume judges it."""
    generated = outcome["trace"].error_type is None  # else the cell says why there is no answer
    return generated and not_answered(outcome)


__all__ = ["CHUNK", "ExperimentRun", "chunks"]
