"""How hard a job tries a model that does not answer, and when it stops trying for this run.

The server has one worker, which runs one job at a time, so a job stuck on a generator or judge
that is down holds every other job back. Two rules bound that:

- `CallPolicy`: a job's model calls are retried fewer times than the library's default (4
  attempts, waits of at most 15 s, an attempt timeout of 60 s for a remote model), read from
  `ASSAY_JOB_RETRY_ATTEMPTS`, `ASSAY_JOB_RETRY_MAX_WAIT` and `ASSAY_JOB_CALL_TIMEOUT`, or given to
  the `Worker` (tests give short ones).
- `Gate`: one per run of every kind of job (experiments, review queues' judge, online
  evaluators; `GatedModels` builds each model once and guards it). Every attempt of every call
  to a model goes through it (`guard` wraps the model's provider). After `policy.attempts`
  failed attempts in a row on one model, counted over all the run's calls to it (a refused or
  cut connection, a timeout, a 5xx), with no success between, the model is *down for this
  run*: the attempts in flight to it end at once and later calls fail at once, all with
  `EndpointDown`. A run that met a down model goes on without asking it, keeps what it stored,
  and ends with `ModelsDown`, which names each model and its last error; the worker then fails
  the job with that one line and takes the next one. What was left: an experiment's cells are
  left undone (resuming the experiment runs them); a review queue's items get an `EndpointDown`
  error score naming the model, which the queue's next run asks again; an online evaluator's
  traces (or sessions) are `judge_down`, with the reason, and its next run judges them, once
  each. An idle worker starts those runs after `ASSAY_JUDGE_RETRY_AFTER` seconds. A 429, or
  any error status that says when to come back (`Retry-After`), is a busy server, not a dead
  one: it is retried as the library does (its limiter slows down) and never counts towards down.

`EndpointDown` and `ModelsDown` are the job's control flow, like `LostClaim`: they never reach a
caller, so they are not in `assay.errors`' tree.
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from assay.errors import ModelError, ModelTimeout, RateLimited
from assay.models.retry import RetryPolicy
from assay.platform.server.jobs.claims import claim_lost
from assay.platform.server.schemas.model_names import routed

# the failures that say "this model does not answer now", as outcomes name them
TRANSIENT_TYPES = frozenset(
    {"ModelConnectionError", "ModelTimeout", "RateLimited", "ProviderError", "MalformedResponse"}
)


def _env_number(name: str, default: float, kind: type = float) -> Any:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"{name} must be more than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class CallPolicy:
    """How a job retries one model call. `timeout` is one attempt's limit in seconds (None: the
    model's own, 900 s for the embedded judge)."""

    attempts: int = 4
    initial_wait: float = 1.0
    max_wait: float = 15.0
    timeout: float | None = 60.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"timeout must be more than 0 seconds, got {self.timeout}")

    @classmethod
    def from_env(cls) -> CallPolicy:
        default = cls()
        return cls(
            attempts=_env_number("ASSAY_JOB_RETRY_ATTEMPTS", default.attempts, int),
            max_wait=_env_number("ASSAY_JOB_RETRY_MAX_WAIT", default.max_wait),
            timeout=_env_number("ASSAY_JOB_CALL_TIMEOUT", default.timeout or 60.0),
        )

    def retry(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.attempts, initial_wait=self.initial_wait, max_wait=self.max_wait
        )


class EndpointDown(Exception):
    """A call to a model that is down for this run: not sent, or cut off when it went down."""

    def __init__(self, model: str, cause: BaseException | None) -> None:
        self.model, self.cause = model, cause
        why = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        super().__init__(f"{model!r} does not answer{why}")


class ModelsDown(Exception):
    """The run left cells undone because models were down; the message names them."""


class Gate:
    """The models of one run and which of them are down (see the module's docstring). Used on
    the run's event loop only."""

    def __init__(self, policy: CallPolicy) -> None:
        self.policy = policy
        self.failures: dict[str, int] = {}  # failed attempts in a row, per model
        self.down: dict[str, BaseException] = {}  # model -> the failure that made it down
        self._events: dict[str, asyncio.Event] = {}
        self.skipped = 0  # cells (or units) the run left undone for a down model

    def is_down(self, model: str) -> bool:
        return model in self.down

    def _event(self, model: str) -> asyncio.Event:
        if model not in self._events:
            self._events[model] = asyncio.Event()
        return self._events[model]

    def failed(self, model: str, exc: BaseException) -> None:
        count = self.failures[model] = self.failures.get(model, 0) + 1
        if count >= self.policy.attempts and model not in self.down:
            self.down[model] = exc
            self._event(model).set()

    def succeeded(self, model: str) -> None:
        self.failures[model] = 0

    def check(self, model: str) -> None:
        if model in self.down:
            raise EndpointDown(model, self.down[model])

    async def attempt(self, model: str, call: Callable[[], Any], timeout: float | None) -> Any:
        """One attempt of a call to `model`, ended early if the model goes down meanwhile."""
        self.check(model)
        went_down = self._event(model)
        attempt = asyncio.ensure_future(_timed(call, timeout))
        watch = asyncio.ensure_future(went_down.wait())
        try:
            await asyncio.wait({attempt, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not attempt.done():
                attempt.cancel()
                # its cancellation runs on; nothing waits for a call to a model that is down
        if not attempt.done() or attempt.cancelled():
            raise EndpointDown(model, self.down.get(model))
        exc = attempt.exception()
        if exc is None:
            self.succeeded(model)
            return attempt.result()
        if isinstance(exc, ModelError) and exc.transient and not _busy(exc):
            self.failed(model, exc)
        raise exc

    def summary(
        self, left: str = "cell(s) were left undone: resume the experiment once the model answers"
    ) -> str:
        """One line for the job's error: the models that are down, why, and what was left
        (`left` follows the count of `skipped`: an experiment's cells, an evaluator's traces)."""
        names = "; ".join(
            f"{model!r} ({type(exc).__name__}: {str(exc)[:300]})"
            for model, exc in self.down.items()
        )
        return (
            f"stopped after {self.policy.attempts} failed attempts in a row: {names} did not "
            f"answer; {self.skipped} {left}"
        )


def _busy(exc: ModelError) -> bool:
    """A server that answered it is busy (429, or a status with Retry-After): alive."""
    return isinstance(exc, RateLimited) or getattr(exc, "retry_after", None) is not None


async def _timed(call: Callable[[], Any], timeout: float | None) -> Any:
    if timeout is None:
        return await call()
    try:
        with anyio.fail_after(timeout):
            return await call()
    except TimeoutError as exc:
        raise ModelTimeout(f"no complete answer within {timeout:g} s") from exc


class _Guarded:
    """A provider whose every attempt goes through the run's gate (the LLM object's own stack,
    cache, retries and limiter stay in front of it)."""

    def __init__(self, inner: Any, gate: Gate, model: str, timeout: float | None) -> None:
        self._inner, self._gate, self._model, self._timeout = inner, gate, model, timeout

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def complete(self, request: Any) -> Any:
        return await self._gate.attempt(
            self._model, lambda: self._inner.complete(request), self._timeout
        )


def _timeout(llm: Any, policy: CallPolicy) -> float | None:
    """One attempt's limit: the policy's, but never shorter than a local model's own (the
    embedded judge's 900 s on a CPU), which a remote model's 120 s default never exceeds."""
    own: float | None = getattr(llm, "attempt_timeout", None)
    if policy.timeout is None or own is None:
        return policy.timeout if own is None else own
    return max(policy.timeout, own) if own > 120.0 else policy.timeout


def bounded(llm: Any, policy: CallPolicy) -> Any:
    """Give `llm` (an `assay.models.LLM`) the policy's retries and attempt timeout."""
    llm.retry = policy.retry()
    llm.attempt_timeout = _timeout(llm, policy)
    return llm


def guard(llm: Any, gate: Gate, model: str) -> Any:
    """Give `llm` the gate's policy (`bounded`) and send every attempt through the gate under
    the name `model`."""
    timeout = _timeout(llm, gate.policy)
    llm.retry = gate.policy.retry()
    llm.attempt_timeout = None  # the gate times each attempt instead
    llm.provider = _Guarded(llm.provider, gate, model, timeout)
    return llm


def not_answered(outcome: dict[str, Any]) -> bool:
    """An error outcome that says the model did not answer (a transient failure, the model down
    for the run, or a call cut off), rather than anything about what was judged."""
    return outcome.get("status") == "error" and (
        outcome.get("error_type") in TRANSIENT_TYPES
        or outcome.get("error_type") in ("EndpointDown", "Cancelled")
    )


class GatedModels:
    """The models one job run asks, each built once (`build_llm`) and sent through the run's
    `Gate`: experiments' generators and judge, review queues' judge and online evaluators'
    judge alike, so a model that keeps failing is asked no more for the rest of the run."""

    def __init__(self, policy: CallPolicy | None = None) -> None:
        self.gate = Gate(policy or CallPolicy.from_env())
        self._models: dict[str, Any] = {}

    def llm(self, model: str) -> Any:
        if model not in self._models:
            self._models[model] = guard(build_llm(model), self.gate, model)
        return self._models[model]

    def judge(self, model: str) -> Callable[[], Any]:
        """The `judge` that `judging.judge_traces` and its kin build when a criterion needs one:
        `EndpointDown` at once while `model` is down (no request is sent, and each trace's
        outcome names the model and why), else the guarded model."""

        def build() -> Any:
            self.gate.check(model)
            return self.llm(model)

        return build

    def is_down(self, model: str) -> bool:
        return self.gate.is_down(model)

    def unanswered(self, model: str, outcomes: list[dict[str, Any]]) -> str | None:
        """Why a unit judged by `model` (a trace, a session: `outcomes` one per criterion) is
        left for a later run: once `model` is down for this run, the first outcome that says it
        did not answer, as "ErrorType: message". None: the outcomes stand as they are."""
        if not self.is_down(model):
            return None
        for outcome in outcomes:
            if not_answered(outcome):
                return f"{outcome.get('error_type')}: {outcome.get('error_message')}"
        return None


class GatedRun(ABC):
    """What every job's run shares (`run.ExperimentRun`, `review_judge.QueueJudgeRun`,
    `online_eval.OnlineEvaluatorRun`): its models through the run's gate (`models`), and
    `run`, which closes the models' HTTP clients on the job's loop and, once `_run` has finished
    with a model down, ends the job with `ModelsDown` saying what was `left`."""

    left = "unit(s) were left without asking it"

    def __init__(
        self,
        state: Any,
        claim: Any,
        should_stop: Callable[[], bool],
        *,
        owner: str,
        policy: CallPolicy | None = None,
    ) -> None:
        self.state, self.claim, self.should_stop, self.owner = state, claim, should_stop, owner
        self.models = GatedModels(policy)

    def _check_claim(self, session: Any) -> None:
        """Write only while this worker still holds the job: not once it was taken over (a stale
        heartbeat) or cancelled."""
        lost = claim_lost(session, self.claim.job_id, self.owner)
        if lost is not None:
            raise lost

    @abstractmethod
    async def _run(self) -> bool:
        """The job's own work: True when done, False when asked to stop first."""

    async def run(self) -> bool:
        """True when the job's work is done; False when asked to stop first; `ModelsDown` when
        a model went down for the run."""
        from assay._util.loop_local import close_loop_locals

        try:
            finished = await self._run()
        finally:  # the models' HTTP clients belong to this job's loop
            await close_loop_locals()
        gate = self.models.gate
        if finished and gate.down:
            raise ModelsDown(gate.summary(self.left))
        return finished


def build_llm(model: str) -> Any:
    """The model object a job asks: the routed name, or the server's default judge for ''; with
    a job's bounded retries and attempt timeout (`CallPolicy`, from the environment), so that
    a judge that is down holds a job for a few calls' retries, not the library's minutes. A
    job's run then sends it through its gate (`GatedModels`, `guard`)."""
    from assay.models import llm_factory
    from assay.models.defaults import default_llm

    llm = llm_factory(routed(model)) if model.strip() else default_llm()
    return bounded(llm, CallPolicy.from_env())


__all__ = [
    "TRANSIENT_TYPES",
    "CallPolicy",
    "EndpointDown",
    "Gate",
    "GatedModels",
    "GatedRun",
    "ModelsDown",
    "bounded",
    "build_llm",
    "guard",
    "not_answered",
]
