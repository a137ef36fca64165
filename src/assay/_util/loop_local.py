"""One object per running event loop, closed when that loop ends.

Async HTTP clients (aiohttp, httpx, and so openai/anthropic) bind their connection pool to the
loop that first used them. assay's sync wrappers run each call on a fresh loop, and users may
also call the async API from their own loops (`asyncio.run(aevaluate(...))`, twice), so a client
must never outlive or cross its loop: we keep one per loop, created on demand.

Closing it: the first object made for a loop also registers a small async generator with that
loop (started, then left suspended). When the loop ends the way `asyncio.run`, `asyncio.Runner`
and anyio end theirs, the loop's own `shutdown_asyncgens()` closes every async generator it
started, ours among them, and ours closes the loop's objects then, while the loop still runs. No
loop is patched. A loop closed without `shutdown_asyncgens()` (a hand-made loop's bare `close()`)
keeps its clients; `close_loop_locals()` closes them from inside the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


_ALL: weakref.WeakSet[LoopLocal[Any]] = weakref.WeakSet()

# The suspended closer of each loop that has loop-local objects (the loop only keeps a weak one).
_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = (
    weakref.WeakKeyDictionary()
)
_CLOSERS_LOCK = threading.Lock()


class LoopLocal(Generic[T]):
    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._values: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )
        _ALL.add(self)

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        value = self._values.get(loop)
        if value is None:
            value = self._values[loop] = self._factory()
            _close_at_the_end_of(loop)
        return value

    def values(self) -> list[T]:
        return list(self._values.values())

    def pop_current(self) -> T | None:
        return self._values.pop(asyncio.get_running_loop(), None)


async def close_loop_locals() -> None:
    """Close every object made for the running loop before the loop ends. Left to the garbage
    collector, an HTTP client would try to close itself on some later, unrelated loop (or warn
    `Unclosed client session`)."""
    for holder in list(_ALL):
        value = holder.pop_current()
        close = getattr(value, "close", None)
        if close is None:
            continue
        try:
            outcome = close()
            if asyncio.iscoroutine(outcome):
                await outcome
        except Exception:  # closing is best effort; the loop is ending anyway
            pass


async def _closer() -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        running: asyncio.AbstractEventLoop | None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # closed outside any loop (garbage collected): nothing to await on
            running = None
        if running is not None:
            with _CLOSERS_LOCK:
                _CLOSERS.pop(running, None)
            await close_loop_locals()


def _close_at_the_end_of(loop: asyncio.AbstractEventLoop) -> None:
    """Register (once per loop) the async generator whose closing closes the loop's objects.
    Called on the loop's own thread, where the loop's async-generator hooks are installed."""
    with _CLOSERS_LOCK:
        if loop in _CLOSERS:
            return
        closer = _closer()
        _CLOSERS[loop] = closer
    first_step = closer.__anext__()  # the loop's `firstiter` hook records the generator here
    with contextlib.suppress(StopIteration):  # the step ends at the `yield`, synchronously
        first_step.send(None)


__all__ = ["LoopLocal", "close_loop_locals"]
