"""One object per running event loop.

Async HTTP clients (httpx, and so openai/anthropic) bind their connection pool to the loop that
first used them. assay's sync wrappers run each call on a fresh loop, and users may also call
the async API from their own loop, so a client must never outlive or cross its loop: we keep
one per loop, created on demand and forgotten with the loop.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


_ALL: weakref.WeakSet[LoopLocal[Any]] = weakref.WeakSet()


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
        return value

    def values(self) -> list[T]:
        return list(self._values.values())

    def pop_current(self) -> T | None:
        return self._values.pop(asyncio.get_running_loop(), None)


async def close_loop_locals() -> None:
    """Close every object made for the running loop before the loop ends. Left to the garbage
    collector, an HTTP client would try to close itself on some later, unrelated loop."""
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


__all__ = ["LoopLocal"]
