"""Ctrl-C during a run with a run directory: keep the answers already on their way.

At the default concurrency a run has a hundred or more model calls in flight. Cancelling them all
at Ctrl-C threw away answers that were already paid for and a second away: the resumed run asked
them again (77 to 154 repeated requests out of 317). So a first Ctrl-C (SIGINT) only stops new
cells from starting; the cells in flight get `grace` seconds to finish and be written to the run
directory, then whatever is left is cancelled and the run raises `KeyboardInterrupt`. A second
Ctrl-C stops at once.

Cells in flight that have not sent their request yet (at the default concurrency most of them
wait for a slot of the judge's limiter) do not send it: the run's budget (`StoppingBudget`), which
every model call consults once it has its slot, refuses with `Interrupted`, and such a cell is
not saved (a resumed run computes it). So the grace period is spent on answers already on their way.

`draining_on_sigint` installs that handler for the duration of a run (only on the main thread,
where signals arrive); the engine reads the request through `current_interruption()`, a context
variable, so the tasks of the run see it without being handed anything.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

import anyio

from assay.errors import ModelError
from assay.models.usage import Budget

GRACE_SECONDS = 5.0


class Interrupted(ModelError):
    """The run was interrupted before this model call was sent; the call was not made."""


class Interruption:
    """A request to stop a run: no new cells, `grace` seconds for those in flight."""

    def __init__(self, grace: float = GRACE_SECONDS) -> None:
        self.grace = grace
        self.requested = threading.Event()
        self.at: float | None = None  # time.monotonic() of the request

    def request(self) -> None:
        if not self.requested.is_set():
            self.at = time.monotonic()
            self.requested.set()

    @property
    def deadline(self) -> float | None:
        """The monotonic time after which cells still in flight are cancelled."""
        return None if self.at is None else self.at + self.grace


class StoppingBudget(Budget):
    """The run's budget (`limit` USD; infinite when the run has none) that also refuses every
    model call not yet sent once `interruption` has been requested."""

    def __init__(self, limit_usd: float, interruption: Interruption) -> None:
        super().__init__(limit_usd)
        self.interruption = interruption

    def check(self) -> None:
        if self.interruption.requested.is_set():
            raise Interrupted("the run was interrupted (Ctrl-C) before this call was sent")
        super().check()


def run_budget(budget: float | None, interruption: Interruption | None) -> Budget | None:
    """The run's spending cap (None: none), refusing calls not yet sent once Ctrl-C asks."""
    if interruption is None:
        return Budget(budget) if budget is not None else None
    return StoppingBudget(math.inf if budget is None else budget, interruption)


async def drain(interruption: Interruption, scope: anyio.CancelScope) -> None:
    """Once Ctrl-C asks for it, give the cells in flight until the grace period ends, then cancel
    `scope` (the workers start no new cell meanwhile)."""
    deadline = interruption.deadline
    while deadline is None:
        await anyio.sleep(0.05)
        deadline = interruption.deadline
    await anyio.sleep(max(0.0, deadline - time.monotonic()))
    scope.cancel()


_current: contextvars.ContextVar[Interruption | None] = contextvars.ContextVar(
    "assay_interruption", default=None
)


def current_interruption() -> Interruption | None:
    return _current.get()


@contextlib.contextmanager
def draining_on_sigint(
    grace: float = GRACE_SECONDS, on_first: Callable[[Interruption], None] | None = None
) -> Iterator[Interruption | None]:
    """For the block: the first SIGINT asks the run to drain (`on_first` is told, e.g. to print
    what happens now), the second raises `KeyboardInterrupt` as usual. Off the main thread signals
    cannot be handled, and the block runs unchanged (yielding None)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    interruption = Interruption(grace)

    def handler(signum: int, frame: FrameType | None) -> None:
        if interruption.requested.is_set():
            raise KeyboardInterrupt
        interruption.request()
        if on_first is not None:
            on_first(interruption)

    previous = signal.signal(signal.SIGINT, handler)
    token = _current.set(interruption)
    try:
        yield interruption
    finally:
        _current.reset(token)
        signal.signal(signal.SIGINT, previous)


__all__ = [
    "GRACE_SECONDS",
    "Interrupted",
    "Interruption",
    "StoppingBudget",
    "current_interruption",
    "drain",
    "draining_on_sigint",
    "run_budget",
]
