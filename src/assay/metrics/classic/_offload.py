"""How the classic metrics keep the event loop free, and refuse work they cannot bound.

Their computations are synchronous CPU work inside an async `_ascore`. Small inputs are scored
inline. Beyond `OFF_LOOP_CHARS` characters `run` moves the work to a daemon thread of its own, so
the event loop keeps running and the engine's per-cell timeout fires on time: a cancelled cell
returns at once and abandons the thread (a thread cannot be stopped), whose answer is then dropped.
The thread is a daemon so that an abandoned computation never holds the process at exit: anyio's
worker threads are not, and a timed-out 5 MB BLEU kept `assay evaluate --timeout 1` alive for 20 s
after it had printed its summary. Abandoning is only safe because every computation here is
bounded: the quadratic ones refuse inputs beyond a size limit (`check_product`, a typed
`MetricError`), never cutting or approximating them.

A thread frees the loop only if the work lets go of the GIL. Pure Python does, every few
milliseconds; rapidfuzz's single-pair functions hold it for the whole comparison (seconds on
300,000-character texts), so large pairs of the integer-valued measures go through
`rapidfuzz.process.cdist`, which releases it (`released_gil`). Modules that take seconds to import (rouge-score pulls in nltk, datacompy pandas)
are imported in a thread the first time (`load`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import importlib
import itertools
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

import anyio.to_thread
from pydantic import BaseModel

from assay.errors import MetricError, UsageError
from assay.metrics.text import OFF_LOOP_CHARS

T = TypeVar("T")

# With this many characters or fewer on the shorter side rapidfuzz compares within one machine
# word, in time linear in the longer side: not worth a detour through `cdist`.
_ONE_WORD = 64


async def run(
    size: int, function: Callable[..., T], *args: Any, inline_up_to: int = OFF_LOOP_CHARS
) -> T:
    """`function(*args)`, inline when `size` (characters of input) is at most `inline_up_to`,
    else in a daemon thread that a cancelled caller abandons. Work that is slow for its size
    (quadratic pure Python) passes a lower `inline_up_to`."""
    if size <= inline_up_to:
        return function(*args)
    return await _in_daemon_thread(function, *args)


async def _in_daemon_thread(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in a new daemon thread (with the caller's context variables), awaited on
    the running loop. Threads in flight count against anyio's default thread limiter, as its own
    worker threads do; a cancelled caller gives its slot back at once and the answer is dropped."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(value: Any, error: BaseException | None) -> None:
        if done.cancelled():
            return  # abandoned: the cell has timed out or the run was cancelled
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(function, *args)
        except BaseException as exc:  # handed to the waiting task
            error = exc
        # A closed loop: nobody waits for this answer any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(deliver, value, error)

    async with anyio.to_thread.current_default_thread_limiter():
        threading.Thread(target=work, name="assay-offload", daemon=True).start()
        return await done


async def load(module: str, importer: Callable[[], ModuleType] | None = None) -> ModuleType:
    """`module`, imported in a worker thread unless it is already imported. `importer` replaces
    `importlib.import_module(module)` (e.g. `require`, for an optional dependency)."""
    loaded = sys.modules.get(module)
    spec = getattr(loaded, "__spec__", None)
    if loaded is not None and not getattr(spec, "_initializing", False):
        return loaded
    do_import = importer or functools.partial(importlib.import_module, module)
    return await anyio.to_thread.run_sync(do_import, abandon_on_cancel=True)


def size_of(*values: Any, cap: int = OFF_LOOP_CHARS) -> int:
    """Characters in `values`: strings, and the strings inside lists, tuples, dicts and pydantic
    models, each container and other scalar counting one. Counting stops once the total passes
    `cap`, so measuring a huge input costs no more than measuring a small one."""
    total, stack = 0, list(values)
    while stack and total <= cap:
        value = stack.pop()
        room = cap + 1 - total
        if isinstance(value, (str, bytes)):
            total += len(value)
            continue
        total += 1
        if isinstance(value, dict):
            stack.extend(itertools.chain.from_iterable(itertools.islice(value.items(), room)))
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(itertools.islice(value, room))
        elif isinstance(value, BaseModel):  # e.g. a message or a tool call: its field values
            stack.extend(itertools.islice(vars(value).values(), room))
    return total


def check_limit(owner: str, value: Any) -> int | None:
    """A size limit given to a metric: None (the default) or a positive whole number."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value
    raise UsageError(
        f"{owner} must be a positive whole number or None (the default), got {value!r}"
    )


def check_product(
    metric: str, sizes: dict[str, int], unit: str, limit: int | None, knob: str, what: str
) -> None:
    """Refuse two inputs whose lengths multiply to more than `limit`²: `what` (e.g. "the edit
    distance") costs time in proportion to that product. `sizes` names the two inputs."""
    if limit is None:
        return
    (first, first_size), (second, second_size) = sizes.items()
    if first_size * second_size <= limit * limit:
        return
    raise MetricError(
        f"{metric}: {first} {'have' if first.endswith('s') else 'has'} {first_size:,} {unit} and "
        f"{second} {second_size:,}; {what} costs time in proportion to their product, limit "
        f"{limit:,} × {limit:,} {unit} (raise {knob} to allow more)"
    )


def released_gil(scorer: Callable[..., Any], a: Any, b: Any, dtype: Any = None) -> Any:
    """`scorer(a, b)` for a rapidfuzz scorer, computed with the GIL released when both sides are
    longer than a machine word (`rapidfuzz.process.cdist`, one worker), directly otherwise (then
    the work is linear anyway). Only for scorers whose `cdist` value is the direct call's:
    Levenshtein, Hamming and LCSseq are (integer distances); Jaro is not, in the last bit."""
    if min(len(a), len(b)) <= _ONE_WORD:
        return scorer(a, b)
    import numpy as np
    from rapidfuzz import process

    with _outside_the_gil():
        grid = process.cdist([a], [b], scorer=scorer, workers=1, dtype=dtype or np.float64)
    return grid[0, 0].item()


# Daemon threads inside C++ code that released the GIL. At interpreter exit a daemon thread that
# asks for the GIL back is ended with pthread_exit, whose unwinding through rapidfuzz's C++
# frames aborts the process ("FATAL: exception not rethrown"); so exit waits for those calls
# (bounded by the metrics' size limits, seconds at most), and only for those.
_NATIVE = threading.Condition()
_native_calls = 0


@contextlib.contextmanager
def _outside_the_gil() -> Iterator[None]:
    global _native_calls
    with _NATIVE:
        _native_calls += 1
    try:
        yield
    finally:
        with _NATIVE:
            _native_calls -= 1
            _NATIVE.notify_all()


@atexit.register
def _let_native_calls_finish() -> None:
    with _NATIVE:
        _NATIVE.wait_for(lambda: _native_calls == 0, timeout=60)


__all__ = [
    "OFF_LOOP_CHARS",
    "check_limit",
    "check_product",
    "load",
    "released_gil",
    "run",
    "size_of",
]
