"""The job worker: claims a job from the `jobs` table, keeps it with a heartbeat, runs it.

Claiming is one `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING …` (on SQLite,
whose writers are serialised by `BEGIN IMMEDIATE`, the lock clause is left out). A running job
whose heartbeat is older than `stale_after` seconds (its worker died) is claimed again and resumes:
generations and scores already stored are skipped, and the model layer's response cache answers
any call that was made but not yet stored, so nothing is generated or judged twice.

A job is stopped mid-chunk, not at the chunk's end: `Worker.stop()` (the server shutting down) and a
heartbeat that finds the job cancelled (`POST /experiments/{id}/cancel`) or taken over cancel the
run's asyncio task. Database writes are synchronous between awaits, so a cancellation never cuts
one in half; what was stored stays, the calls in flight are dropped (their answers, if they came,
are in the response cache for a resume). A stopping worker hands its job back as `queued`.

An experiment job, per chunk of cohort × example units: generate the missing answers through
`assay.models.llm_factory` (the cohort's model and system prompt override the task's; the example's
context is given with the question), store each as a trace, then judge the missing cells with the
library (`assay.aevaluate` with the library's `Criteria` metric; function criteria run here with
RE2), storing each typed outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from sqlalchemy import or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from assay.platform import criteria_rules
from assay.platform.server import models

log = logging.getLogger("assay.platform.worker")
CHUNK = 16


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class Claim:
    job_id: int
    experiment_id: int | None
    project_id: int
    kind: str = "experiment"
    queue_id: int | None = None  # a review_judge job's queue (review_judge.py)


class LostClaim(Exception):
    """Another worker took the job over (this one's heartbeat went stale)."""


class JobCancelled(LostClaim):
    """The job was cancelled (its experiment too, by the cancel endpoint): write nothing more."""


def _claim_lost(session: Any, job_id: int, owner: str) -> LostClaim | None:
    """Why this worker may no longer write for the job, or None while it holds it. On PostgreSQL
    the job row stays locked until the caller's transaction ends, so a cancel or a takeover waits
    for a write in progress instead of slipping in between this check and the write."""
    query = select(models.Job.claimed_by, models.Job.status).where(models.Job.id == job_id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    row = session.execute(query).first()
    if row is not None and row.status == "cancelled":
        return JobCancelled(f"job {job_id} was cancelled")
    if row is None or row.claimed_by != owner or row.status != "running":
        return LostClaim(f"job {job_id} was taken over")
    return None


class Worker:
    def __init__(
        self,
        state: Any,
        *,
        poll_interval: float = 0.5,
        heartbeat_interval: float | None = None,
        stale_after: float | None = None,
        name: str | None = None,
        kinds: tuple[str, ...] = ("experiment", "review_judge"),
    ) -> None:
        self.state, self.kinds = state, kinds
        self.poll_interval = poll_interval
        self.heartbeat_interval = heartbeat_interval or _env_float("ASSAY_WORKER_HEARTBEAT", 10.0)
        self.stale_after = stale_after or _env_float("ASSAY_WORKER_STALE_AFTER", 30.0)
        self.name = name or f"worker-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task] | None = None
        self._running_lock = threading.Lock()
        self._claim: Claim | None = None  # the job in progress

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Worker:
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop at once: a job in progress is interrupted and handed back (`queued`)."""
        self._stop.set()
        self._interrupt()
        if self._thread is not None:
            self._thread.join(timeout)

    def _interrupt(self) -> None:
        """Cancel the job's asyncio task (from any thread); the worker thread decides what next."""
        with self._running_lock:
            running = self._running
        if running is not None:
            loop, task = running
            # RuntimeError: the loop has just closed, so the run is over anyway
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)

    def cancelled(self, experiment_id: int) -> None:
        """The experiment was cancelled (committed): stop at once if this worker is running it,
        rather than at its next write or heartbeat. The job is no longer `running`, so nothing
        this worker does afterwards is stored."""
        claim = self._claim
        if (
            claim is not None
            and claim.kind == "experiment"
            and claim.experiment_id == experiment_id
        ):
            self._interrupt()

    async def _supervised(self, run: Any) -> bool:
        task = asyncio.current_task()
        assert task is not None
        with self._running_lock:
            self._running = (asyncio.get_running_loop(), task)
        try:
            if self._stop.is_set():  # stop() came before this task could be cancelled
                raise asyncio.CancelledError
            return await run.run()
        finally:
            with self._running_lock:
                self._running = None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                claim = self.claim()
            except Exception:  # the database is away for a moment: try again later
                log.exception("claiming a job failed")
                claim = None
            if claim is None:
                self._stop.wait(self.poll_interval)
                continue
            self.process(claim)

    # -- the job table -----------------------------------------------------------------------------
    def claim(self) -> Claim | None:
        now = datetime.now(timezone.utc)
        stale = now - timedelta(seconds=self.stale_after)
        job = models.Job
        candidate = (
            select(job.id)
            .where(
                job.kind.in_(self.kinds),
                or_(job.status == "queued", (job.status == "running") & (job.heartbeat_at < stale)),
            )
            .order_by(job.id)
            .limit(1)
        )
        if self.state.engine.dialect.name == "postgresql":
            candidate = candidate.with_for_update(skip_locked=True)
        statement = (
            update(job)
            .where(job.id == candidate.scalar_subquery())
            .values(
                status="running", claimed_by=self.name, heartbeat_at=now, attempts=job.attempts + 1
            )
            .returning(job.id, job.experiment_id, job.project_id, job.kind, job.queue_id)
        )
        with self.state.transaction() as session:
            row = session.execute(statement).first()
        return Claim(*row) if row else None

    def heartbeat(self, claim: Claim) -> None:
        """Keep the claim fresh; `JobCancelled` or `LostClaim` when the job is no longer ours."""
        with self.state.transaction() as session:
            done = session.execute(
                update(models.Job)
                .where(
                    models.Job.id == claim.job_id,
                    models.Job.claimed_by == self.name,
                    models.Job.status == "running",
                )
                .values(heartbeat_at=datetime.now(timezone.utc))
            )
            lost = _claim_lost(session, claim.job_id, self.name) if done.rowcount == 0 else None
        if done.rowcount == 0:
            raise lost or LostClaim(f"job {claim.job_id} was taken over")

    def _finish(
        self,
        claim: Claim,
        status: str,
        error: str | None = None,
        experiment_status: str | None = None,
    ) -> None:
        now = datetime.now(timezone.utc)
        with self.state.transaction() as session:
            done = session.execute(
                update(models.Job)
                .where(
                    models.Job.id == claim.job_id,
                    models.Job.claimed_by == self.name,
                    models.Job.status == "running",  # not one cancelled meanwhile
                )
                .values(
                    status=status,
                    error=error,
                    finished_at=now if status in ("done", "failed") else None,
                    claimed_by=None if status == "queued" else self.name,
                )
            )
            if experiment_status is not None and done.rowcount:
                session.execute(
                    update(models.Experiment)
                    .where(
                        models.Experiment.id == claim.experiment_id,
                        models.Experiment.project_id == claim.project_id,
                    )
                    .values(status=experiment_status, error=error, finished_at=now)
                )

    def process(self, claim: Claim) -> None:
        self._claim = claim
        try:
            self._process(claim)
        finally:
            self._claim = None

    def _process(self, claim: Claim) -> None:
        lost = threading.Event()  # taken over, or cancelled: either way write nothing more
        beating = threading.Event()

        def beat() -> None:
            while not beating.wait(self.heartbeat_interval):
                try:
                    self.heartbeat(claim)
                except LostClaim as exc:
                    log.info("job %s: %s; stopping it", claim.job_id, exc)
                    lost.set()
                    self._interrupt()
                    return
                except Exception:
                    log.warning("heartbeat of job %s failed", claim.job_id, exc_info=True)

        pulse = threading.Thread(target=beat, name=f"{self.name}-heartbeat", daemon=True)
        pulse.start()
        try:
            runner: Any = ExperimentRun
            if claim.kind == "review_judge":
                from assay.platform.server.review_judge import QueueJudgeRun as runner
            run = runner(
                self.state, claim, lambda: self._stop.is_set() or lost.is_set(), owner=self.name
            )
            finished = asyncio.run(self._supervised(run))
        except LostClaim:
            return
        except asyncio.CancelledError:  # stop() or the heartbeat interrupted the run
            finished = False
        except Exception as exc:
            log.exception("job %s (%s) failed", claim.job_id, claim.kind)
            message = f"{type(exc).__name__}: {exc}".strip()
            experiment = "failed" if claim.kind == "experiment" else None
            self._finish(claim, "failed", message[:2000], experiment)
            return
        finally:
            beating.set()
            pulse.join(5)
        if lost.is_set():
            return
        if finished:
            self._finish(claim, "done", None, "completed" if claim.kind == "experiment" else None)
        else:  # stopping: hand the job back so the next worker resumes it at once
            self._finish(claim, "queued")


# -- one experiment ----------------------------------------------------------------------------------
@dataclass
class Unit:
    cohort: models.ExperimentCohort
    example: models.Example


def _contexts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value or []]


def _user_message(example: models.Example) -> str:
    contexts = _contexts(example.ground_truth_context)
    if not contexts:
        return example.question
    joined = "\n\n".join(contexts)
    return f"Context:\n{joined}\n\nQuestion: {example.question}"


class ExperimentRun:
    def __init__(self, state: Any, claim: Claim, should_stop: Any, *, owner: str) -> None:
        self.state, self.claim, self.should_stop, self.owner = state, claim, should_stop, owner
        self._models: dict[str, Any] = {}
        self._pipelines: dict[str, tuple[str, float]] = {}
        self._http: httpx.AsyncClient | None = None  # for RAG pipeline cohorts, made when needed

    def _insert(self, table: Any) -> Any:
        return (pg_insert if self.state.engine.dialect.name == "postgresql" else sqlite_insert)(
            table
        )

    def _llm(self, model: str) -> Any:
        if model not in self._models:
            from assay.models import llm_factory
            from assay.models.defaults import default_llm

            self._models[model] = llm_factory(model) if model else default_llm()
        return self._models[model]

    async def run(self) -> bool:
        """True when every cell is stored; False when asked to stop first."""
        try:
            return await self._run()
        finally:
            if self._http is not None:  # closed on the loop it was made on
                await self._http.aclose()

    async def _run(self) -> bool:
        from assay.platform.server.experiments import ExperimentRepo

        with self.state.transaction() as session:
            self._check_claim(session)  # cancelled between the claim and now: leave it so
            repo = ExperimentRepo(session, self.claim.project_id)
            experiment = repo.get(self.claim.experiment_id)
            if experiment.started_at is None:
                experiment.started_at = datetime.now(timezone.utc)
            experiment.status = "running"
            cohorts, examples = repo.cohorts(experiment), repo.examples(experiment)
            task, criteria, judge_model = (
                dict(experiment.task),
                list(experiment.criteria),
                experiment.judge_model,
            )
            traces = {(t.cohort_id, t.example_id): t for t in repo.traces(experiment)}
            scored = {(s.trace_id, s.criteria_key) for s in repo.scores(experiment)}
            self._pipelines = {
                p.name: (p.url, p.timeout_s)
                for p in session.scalars(
                    select(models.RagPipeline).where(
                        models.RagPipeline.project_id == self.claim.project_id
                    )
                )
            }
        units = [Unit(c, e) for c in cohorts for e in examples]
        judge = None
        if any(c["criteria_type"] == "llm_judge" for c in criteria):
            judge = self._llm(judge_model)
        for start in range(0, len(units), CHUNK):
            if self.should_stop():
                return False
            chunk = units[start : start + CHUNK]
            missing = [u for u in chunk if (u.cohort.id, u.example.id) not in traces]
            if missing:
                generated = await asyncio.gather(*(self._generate(task, u) for u in missing))
                traces.update(self._store_traces(generated))
            chunk_traces = [traces[(u.cohort.id, u.example.id)] for u in chunk]
            for criterion in criteria:
                todo = [
                    (u, t)
                    for u, t in zip(chunk, chunk_traces, strict=True)
                    if (t.id, criterion["key"]) not in scored
                ]
                if todo:
                    outcomes = await self._judge(criterion, todo, judge)
                    self._store_scores(criterion, outcomes)
                    scored.update((t.id, criterion["key"]) for _u, t in todo)
        return True

    async def _generate(self, task: dict[str, Any], unit: Unit) -> dict[str, Any]:
        if unit.cohort.rag_pipeline is not None:
            return await self._ask_pipeline(unit)
        from assay.errors import AssayError

        model = unit.cohort.generator_model or task.get("generator_model") or ""
        system = (
            unit.cohort.system_prompt
            if unit.cohort.system_prompt is not None
            else task.get("system_prompt") or ""
        )
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": _user_message(unit.example)}
        ]
        row = self._trace_row(
            unit,
            contexts=_contexts(unit.example.ground_truth_context),
            raw_input={"model": model, "messages": messages},
            meta={"cohort": unit.cohort.name, "source": "experiment"},
            model=model or "default",
        )
        started = time.monotonic()
        try:
            response = await self._llm(model).agenerate(messages)
        except AssayError as exc:
            row.update(error_type=type(exc).__name__, error_message=str(exc)[:4000])
        except Exception as exc:  # a provider SDK's own failure: still a typed, stored outcome
            row.update(
                error_type=type(exc).__name__, error_message=str(exc)[:4000] or type(exc).__name__
            )
        else:
            row.update(
                output=response.text,
                raw_output={
                    "text": response.text,
                    "model": response.model,
                    "cached": response.cached,
                },
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
            )
        row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        return row

    def _trace_row(self, unit: Unit, **fields: Any) -> dict[str, Any]:
        """A generation's trace row before it runs: no output, no usage, no error yet."""
        return {
            "project_id": self.claim.project_id,
            "experiment_id": self.claim.experiment_id,
            "cohort_id": unit.cohort.id,
            "example_id": unit.example.id,
            "input": unit.example.question,
            "output": None,
            "raw_output": None,
            "input_tokens": 0,
            "output_tokens": 0,
            "latency_ms": 0.0,
            "error_type": None,
            "error_message": None,
            **fields,
        }

    async def _ask_pipeline(self, unit: Unit) -> dict[str, Any]:
        """The cohort's registered RAG pipeline answers the example: its answer and retrieved
        contexts become the trace (a failure is the trace's typed error)."""
        from assay.platform.server.api_pipelines import PipelineError, pipeline_answer

        name = unit.cohort.rag_pipeline
        row = self._trace_row(
            unit,
            contexts=[],
            raw_input={"rag_pipeline": name, "question": unit.example.question},
            meta={"cohort": unit.cohort.name, "source": "experiment", "rag_pipeline": name},
            model=f"pipeline:{name}",
        )
        started = time.monotonic()
        registered = self._pipelines.get(name)
        try:
            if registered is None:
                raise PipelineError(f"no RAG pipeline named {name!r} is registered any more")
            if self._http is None:
                self._http = httpx.AsyncClient()
            answer, contexts, raw = await pipeline_answer(
                self._http, registered[0], unit.example.question, registered[1]
            )
        except PipelineError as exc:
            row.update(error_type="PipelineError", error_message=str(exc)[:4000])
        else:
            row.update(output=answer, contexts=contexts, raw_output=raw)
        row["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        return row

    def _store_traces(self, rows: list[dict[str, Any]]) -> dict[tuple[int, int], models.Trace]:
        from assay.platform.server.experiments import ExperimentRepo

        table = models.Trace.__table__
        values = [
            {("metadata" if k == "meta" else k): v for k, v in row.items()}
            | {"created_at": datetime.now(timezone.utc)}
            for row in rows
        ]
        with self.state.transaction() as session:
            self._check_claim(session)
            session.execute(
                self._insert(table)
                .values(values)
                .on_conflict_do_nothing(index_elements=["experiment_id", "cohort_id", "example_id"])
            )
            experiment = ExperimentRepo(session, self.claim.project_id).get(
                self.claim.experiment_id
            )
            stored = ExperimentRepo(session, self.claim.project_id).traces(experiment)
        wanted = {(r["cohort_id"], r["example_id"]) for r in rows}
        return {
            (t.cohort_id, t.example_id): t for t in stored if (t.cohort_id, t.example_id) in wanted
        }

    def _check_claim(self, session: Any) -> None:
        """Write only while this worker still holds the job: not once it was taken over (a stale
        heartbeat) or cancelled."""
        lost = _claim_lost(session, self.claim.job_id, self.owner)
        if lost is not None:
            raise lost

    async def _judge(
        self, criterion: dict[str, Any], todo: list[tuple[Unit, models.Trace]], judge: Any
    ) -> list[dict[str, Any]]:
        outcomes: list[dict[str, Any] | None] = [None] * len(todo)
        ask: list[int] = []
        for index, (_unit, trace) in enumerate(todo):
            if trace.error_type is not None:
                outcomes[index] = {
                    "status": "error",
                    "error_type": trace.error_type,
                    "error_message": f"the answer could not be generated: {trace.error_message}",
                }
            elif criterion["criteria_type"] == "function":
                outcomes[index] = self._function(criterion, trace)
            else:
                ask.append(index)
        if ask:
            from assay import SingleTurnSample, aevaluate
            from assay.metrics.criteria import Criteria as LibraryCriteria

            fields = {f: criterion[f] for f in criteria_rules.FIELDS if f != "validation_status"}
            metric = LibraryCriteria(**fields)
            samples = []
            for index in ask:
                unit, trace = todo[index]
                samples.append(
                    SingleTurnSample(
                        user_input=unit.example.question,
                        response=trace.output or "",
                        retrieved_contexts=list(trace.contexts or []),
                        reference=unit.example.ground_truth_answer or None,
                    )
                )
            result = await aevaluate(samples, [metric], llm=judge, show_progress=False)
            for position, index in enumerate(ask):
                outcomes[index] = _outcome_row(result.outcome(position, metric.name))
        return [{"trace": t, **o} for (_u, t), o in zip(todo, outcomes, strict=True)]  # type: ignore[dict-item]

    def _function(self, criterion: dict[str, Any], trace: models.Trace) -> dict[str, Any]:
        subject = (
            "\n\n".join(trace.contexts or [])
            if criterion["phase"] == "retrieval"
            else (trace.output or "")
        )
        try:
            matched = criteria_rules.string_match(
                subject,
                criterion["match_type"],
                criterion["match_pattern"],
                criterion["case_sensitive"],
                require_re2=True,
            )
        except Exception as exc:
            return {"status": "error", "error_type": type(exc).__name__, "error_message": str(exc)}
        return {
            "status": "ok",
            "value": float(matched),
            "reason": f"{criterion['match_type']} {criterion['match_pattern']!r}: {'matched' if matched else 'no match'}",
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
            session.execute(
                self._insert(models.Score.__table__)
                .values(values)
                .on_conflict_do_nothing(index_elements=["trace_id", "criteria_key"])
            )


def _outcome_row(outcome: Any) -> dict[str, Any]:
    import math

    status = getattr(outcome, "status", "error")
    if status == "ok":
        value = outcome.value
        number = float(value) if isinstance(value, (int, float)) else None
        if number is None or not math.isfinite(number):
            return {
                "status": "error",
                "error_type": "InvalidValue",
                "error_message": f"the judge gave {value!r}",
            }
        return {"status": "ok", "value": number, "reason": outcome.reason}
    if status == "skipped":
        return {"status": "skipped", "reason": outcome.reason}
    return {
        "status": "error",
        "error_type": getattr(outcome, "error_type", "Error"),
        "error_message": getattr(outcome, "message", str(outcome)),
    }


__all__ = ["CHUNK", "Claim", "ExperimentRun", "JobCancelled", "LostClaim", "Worker"]
