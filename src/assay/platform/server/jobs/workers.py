"""The server's job workers as a small pool (`Workers`): experiments on workers of their own, and
review-queue judging and online evaluation on another, so that a long experiment never holds up
the scoring of production traffic.

One `Worker` (worker.py) runs one job at a time. A pool of one worker for every kind made an
online evaluator's traces wait behind a whole experiment run; here each experiment worker claims
only `experiment` jobs and one scoring worker claims `review_judge` and `online_eval` jobs (and
wakes the online evaluators of settled sessions when idle). `experiment_workers=N` runs N
experiments at once. The workers share nothing but the database: claims are row claims with a
heartbeat (claims.py), safe between threads as between servers.

The pool has the surface the app and the UI use: `start()`, `stop()` and `cancelled(id)`, which
every worker hears (the one running the experiment stops at once), and `call_policy`, set on
every worker.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any

from assay.errors import UsageError
from assay.platform.server.jobs.calls import CallPolicy
from assay.platform.server.jobs.worker import Worker

ENV = "ASSAY_EXPERIMENT_WORKERS"
MAX_EXPERIMENT_WORKERS = 32
EXPERIMENT_KINDS: tuple[str, ...] = ("experiment",)
SCORING_KINDS: tuple[str, ...] = ("review_judge", "online_eval")
ALL_KINDS = EXPERIMENT_KINDS + SCORING_KINDS
# what `assay worker --kinds` takes: a name for each kind and for the two groups
KIND_GROUPS: dict[str, tuple[str, ...]] = {
    "all": ALL_KINDS,
    "experiments": EXPERIMENT_KINDS,
    "scoring": SCORING_KINDS,
    **{kind: (kind,) for kind in ALL_KINDS},
}


def experiment_workers(value: int | None) -> int:
    """How many experiments run at once: `value` if given, else `ASSAY_EXPERIMENT_WORKERS`, else 1.
    A value that is not a whole number from 1 to 32 is a UsageError naming where it came from."""
    source = "--experiment-workers"
    if value is None:
        raw = os.environ.get(ENV, "").strip()
        if not raw:
            return 1
        source = ENV
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"{ENV} must be a whole number of workers, got {raw!r}") from None
    if not 1 <= value <= MAX_EXPERIMENT_WORKERS:
        raise UsageError(
            f"{source} must be from 1 to {MAX_EXPERIMENT_WORKERS} workers, got {value!r}"
        )
    return value


def parse_kinds(spec: str) -> tuple[str, ...]:
    """`--kinds`: comma-separated names of KIND_GROUPS ("scoring", "experiments,online_eval");
    an unknown name is a UsageError listing the known ones."""
    kinds: list[str] = []
    for name in (part.strip().lower() for part in spec.split(",")):
        if name not in KIND_GROUPS:
            known = ", ".join(KIND_GROUPS)
            raise UsageError(f"--kinds: unknown job kind {name!r} (known: {known})")
        kinds.extend(kind for kind in KIND_GROUPS[name] if kind not in kinds)
    return tuple(kinds)


class Workers:
    """The pool: `experiment_workers` workers for experiments and one for the scoring kinds, as
    far as `kinds` asks for each. `options` go to every `Worker` (poll and heartbeat intervals,
    `call_policy`, ...); a `name` given there is the stem of the workers' names."""

    def __init__(
        self,
        state: Any,
        *,
        experiment_workers: int = 1,
        kinds: tuple[str, ...] = ALL_KINDS,
        **options: Any,
    ) -> None:
        if experiment_workers < 1:
            raise ValueError(f"experiment_workers must be at least 1, got {experiment_workers}")
        unknown = [kind for kind in kinds if kind not in ALL_KINDS]
        if unknown or not kinds:
            raise ValueError(f"kinds must be some of {ALL_KINDS}, got {kinds!r}")
        self.state, self.kinds = state, tuple(kinds)
        self.experiment_workers = experiment_workers
        self.name = options.pop("name", None) or f"worker-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._options = options
        self.workers: list[Worker] = []

    def _plan(self) -> list[tuple[str, tuple[str, ...]]]:
        """(name, kinds) of each worker to start."""
        plan = []
        if "experiment" in self.kinds:
            plan += [
                (f"{self.name}-experiments-{i + 1}", EXPERIMENT_KINDS)
                for i in range(self.experiment_workers)
            ]
        scoring = tuple(kind for kind in self.kinds if kind in SCORING_KINDS)
        if scoring:
            plan.append((f"{self.name}-scoring", scoring))
        return plan

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Workers:
        """Start the workers (fresh ones: a stopped pool may be started again)."""
        self.workers = [
            Worker(self.state, name=name, kinds=kinds, **self._options).start()
            for name, kinds in self._plan()
        ]
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every worker at once (each hands its job in progress back as `queued`), and wait
        for them all: the pool takes as long as its slowest worker, not the sum."""
        stopping = [
            threading.Thread(target=worker.stop, args=(timeout,), name=f"{worker.name}-stop")
            for worker in self.workers
        ]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join(timeout + 1)

    def cancelled(self, experiment_id: int) -> None:
        """The experiment was cancelled: the worker running it (whichever) stops it at once."""
        for worker in self.workers:
            worker.cancelled(experiment_id)

    @property
    def call_policy(self) -> CallPolicy | None:
        return self._options.get("call_policy")

    @call_policy.setter
    def call_policy(self, policy: CallPolicy | None) -> None:
        """The calls' policy of every worker's next job (None: `CallPolicy.from_env()`)."""
        self._options["call_policy"] = policy
        for worker in self.workers:
            worker.call_policy = policy

    def describe(self) -> str:
        """One line for the server's banner: how many workers take which jobs."""
        parts = []
        if "experiment" in self.kinds:
            parts.append(f"{self.experiment_workers} for experiments")
        scoring = [kind for kind in self.kinds if kind in SCORING_KINDS]
        if scoring:
            parts.append(f"1 for {' and '.join(scoring)}")
        return "workers: " + ", ".join(parts)


__all__ = [
    "ALL_KINDS",
    "EXPERIMENT_KINDS",
    "KIND_GROUPS",
    "SCORING_KINDS",
    "Workers",
    "experiment_workers",
    "parse_kinds",
]
