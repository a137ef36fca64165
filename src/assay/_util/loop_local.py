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
from typing import Generic, TypeVar

T = TypeVar("T")


class LoopLocal(Generic[T]):
    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._values: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        value = self._values.get(loop)
        if value is None:
            value = self._values[loop] = self._factory()
        return value

    def values(self) -> list[T]:
        return list(self._values.values())


__all__ = ["LoopLocal"]
