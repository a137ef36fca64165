"""The job worker: a thread that claims jobs from the `jobs` table and runs each while a second
thread keeps its claim fresh with a heartbeat.

The job table's statements (claim, heartbeat, finish, the claim check before each write) are in
`claims.py`; an experiment job is an `ExperimentRun` (`run.py`), a review queue's
judge job a `QueueJudgeRun` (`review_judge.py`), an online evaluator's job an
`OnlineEvaluatorRun` (`online_eval.py`). This module owns the threads and the job's end:
done, failed, handed back, or left alone when the claim was lost.

A job is stopped mid-chunk, not at the chunk's end: `Worker.stop()` (the server shutting down), a
cancel on this server (`Worker.cancelled`, from `POST /experiments/{id}/cancel` and the web UI's
Cancel button) and a heartbeat that finds the job cancelled or taken over cancel the run's asyncio
task. Between heartbeats the same thread looks every `cancel_check_interval` seconds (1 s)
whether the job was cancelled, so a cancel made elsewhere (another server on the same database)
stops the run's calls in flight within about a second. Database writes are
synchronous between awaits, so a cancellation never cuts one in half; what was stored stays, the
calls in flight are dropped (their answers, if they came, are in the response cache for a
resume). A stopping worker hands its job back as `queued`.

A run that met a model that does not answer (`calls.py`: `ModelsDown`) and a job that fails on
a user's error (an `AssayError`: a missing key, a bad setting) fail in one line of the log, with
no traceback; anything else is a bug and keeps its traceback. A database that is busy or away
for a moment (`database_busy`: SQLite's lock wait ran out while another worker, ingest or
retention wrote; PostgreSQL's connection lost, a deadlock) is not the job's fault: the job is
handed back as `queued`, and resumed, instead of failing; ending a claim is tried again until
the database answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
from typing import Any

from sqlalchemy.exc import OperationalError

from assay.errors import AssayError
from assay.platform.server.jobs import claims as job_claims
from assay.platform.server.jobs import holder
from assay.platform.server.jobs.calls import CallPolicy, ModelsDown
from assay.platform.server.jobs.claims import Claim, JobCancelled, LostClaim
from assay.platform.server.jobs.run import CHUNK, ExperimentRun

log = logging.getLogger("assay.platform.worker")
WAKE_INTERVAL = 1.0  # seconds between an idle worker's looks for settled sessions
DOWN_CHECK_INTERVAL = 30.0  # seconds between an idle worker's looks for judges to ask again
BUSY_PAUSE = 1.0  # seconds a worker waits after the database was busy before it goes on
_SQLITE_BUSY = ("database is locked", "database is busy", "database table is locked")


def database_busy(exc: BaseException) -> bool:
    """Whether `exc` is the database busy or away for a moment, so that the same work done again
    later will do: on SQLite a lock wait that ran out (not, say, a missing table); on PostgreSQL
    any operational error (a lost connection, a deadlock, a serialization failure). Looks through
    the chain: `ServerState.transaction` raises such errors as a 503 `ApiError`."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OperationalError):
            if seen.connection_invalidated:
                return True
            driver = type(seen.orig).__module__
            if driver.startswith("sqlite3"):
                return str(seen.orig).lower().startswith(_SQLITE_BUSY)
            return driver.startswith("psycopg")
        seen = seen.__cause__ or seen.__context__
    return False


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class Worker:
    def __init__(
        self,
        state: Any,
        *,
        poll_interval: float = 0.5,
        heartbeat_interval: float | None = None,
        stale_after: float | None = None,
        name: str | None = None,
        kinds: tuple[str, ...] = ("experiment", "review_judge", "online_eval"),
        call_policy: CallPolicy | None = None,
        cancel_check_interval: float = 1.0,
    ) -> None:
        self.state, self.kinds = state, kinds
        self.poll_interval = poll_interval
        self.call_policy = call_policy  # None: CallPolicy.from_env() per job run
        self.heartbeat_interval = heartbeat_interval or _env_float("ASSAY_WORKER_HEARTBEAT", 10.0)
        self.cancel_check_interval = min(cancel_check_interval, self.heartbeat_interval)
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
        woken = looked_down = 0.0
        while not self._stop.is_set():
            try:
                claim = self.claim()
            except Exception:  # the database is away for a moment: try again later
                log.exception("claiming a job failed")
                claim = None
            if claim is None:
                if "online_eval" in self.kinds and time.monotonic() - woken >= WAKE_INTERVAL:
                    woken = time.monotonic()
                    self._wake_sessions()
                if (
                    "online_eval" in self.kinds or "review_judge" in self.kinds
                ) and time.monotonic() - looked_down >= DOWN_CHECK_INTERVAL:
                    looked_down = time.monotonic()
                    self._wake_judge_down()
                self._stop.wait(self.poll_interval)
                continue
            try:
                self.process(claim)
            except Exception:  # the thread goes on; the claim, if still held, goes stale
                log.exception("job %s: the worker could not end it", claim.job_id)
                self._stop.wait(BUSY_PAUSE)

    def _wake_sessions(self) -> None:
        """Idle: sessions that have settled since get their evaluator a job (no job waits for
        a session to go quiet, so that experiments and queues are never held up by one)."""
        from assay.platform.server.storage.session_evaluations import wake_due

        try:
            wake_due(self.state.transaction)
        except Exception:  # the database is away for a moment: the next tick tries again
            log.warning("waking settled sessions failed", exc_info=True)

    def _wake_judge_down(self) -> None:
        """Idle: evaluators whose rows were left `judge_down`, and review queues whose items hold
        `EndpointDown` scores, over `ASSAY_JUDGE_RETRY_AFTER` seconds ago (300 by default) get a
        job (of the kinds this worker runs), so a judge that is back is asked again on its own,
        and one still down at most once every that many seconds."""

        from assay.platform.server.storage import evaluator_rules, review_judging

        after = review_judging.retry_after()
        for kind, wake, what in (
            ("online_eval", evaluator_rules.wake_judge_down, "evaluators"),
            ("review_judge", review_judging.wake_judge_down, "review queues"),
        ):
            if kind not in self.kinds:
                continue
            try:
                wake(self.state.transaction, after)
            except Exception:  # the database is away for a moment: the next look tries again
                log.warning("waking %s whose judge was down failed", what, exc_info=True)

    # -- the job table -----------------------------------------------------------------------------
    def claim(self) -> Claim | None:
        return job_claims.claim_next(
            self.state, self.name, self.kinds, self.stale_after, holder.this_process()
        )

    def heartbeat(self, claim: Claim) -> None:
        """Keep the claim fresh; `JobCancelled` or `LostClaim` when the job is no longer ours."""
        job_claims.heartbeat(self.state, claim, self.name)

    def _finish(
        self,
        claim: Claim,
        status: str,
        error: str | None = None,
        experiment_status: str | None = None,
    ) -> None:
        """End the claim; while the database is busy, again every second (until stopping)."""
        while True:
            try:
                job_claims.finish(self.state, claim, self.name, status, error, experiment_status)
                return
            except Exception as exc:
                if not database_busy(exc) or self._stop.is_set():
                    raise
                log.warning("job %s: ending it as %s waits for the database", claim.job_id, status)
                self._stop.wait(BUSY_PAUSE)

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
            last = time.monotonic()
            while not beating.wait(self.cancel_check_interval):
                try:
                    if time.monotonic() - last >= self.heartbeat_interval:
                        last = time.monotonic()
                        self.heartbeat(claim)
                    else:  # between heartbeats: only look whether the job was cancelled
                        job_claims.check(self.state, claim, self.name)
                except LostClaim as exc:
                    log.info("job %s: %s; stopping it", claim.job_id, exc)
                    lost.set()
                    self._interrupt()
                    return
                except Exception:
                    log.warning("heartbeat of job %s failed", claim.job_id, exc_info=True)

        pulse = threading.Thread(target=beat, name=f"{self.name}-heartbeat", daemon=True)
        pulse.start()
        busy = False
        try:
            runner: Any = ExperimentRun
            if claim.kind == "review_judge":
                from assay.platform.server.jobs.review_judge import QueueJudgeRun as runner
            elif claim.kind == "online_eval":
                from assay.platform.server.jobs.online_eval import OnlineEvaluatorRun as runner
            run = runner(
                self.state,
                claim,
                lambda: self._stop.is_set() or lost.is_set(),
                owner=self.name,
                policy=self.call_policy,
            )
            finished = asyncio.run(self._supervised(run))
        except LostClaim:
            return
        except asyncio.CancelledError:  # stop() or the heartbeat interrupted the run
            finished = False
        except (ModelsDown, AssayError) as exc:  # expected: one line, no traceback
            log.warning(
                "job %s (%s) failed: %s: %s", claim.job_id, claim.kind, type(exc).__name__, exc
            )
            message = str(exc) if isinstance(exc, ModelsDown) else f"{type(exc).__name__}: {exc}"
            experiment = "failed" if claim.kind == "experiment" else None
            self._finish(claim, "failed", message[:2000], experiment)
            return
        except Exception as exc:
            if database_busy(exc):  # not the job's fault: handed back below, and resumed
                log.warning(
                    "job %s (%s): the database was busy (%s); handing it back to resume it",
                    claim.job_id,
                    claim.kind,
                    exc,
                )
                busy, finished = True, False
            else:
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
        else:  # stopping, or the database was busy: hand the job back to be resumed
            self._finish(claim, "queued")
        if busy:  # give the database a moment before this worker claims again
            self._stop.wait(BUSY_PAUSE)


# the worker's names from before the split stay importable from here
__all__ = ["CHUNK", "Claim", "ExperimentRun", "JobCancelled", "LostClaim", "Worker"]
