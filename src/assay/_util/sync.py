"""Run a coroutine to completion from synchronous code.

Without a running event loop we simply use `asyncio.run`. Inside one (Jupyter, an async web
handler, pytest-asyncio) we must not block or re-enter that loop, and we refuse to patch it
globally the way nest_asyncio does; instead the coroutine runs on a fresh loop in a worker
thread and the caller's thread waits for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _has_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# The loops `run_sync` made. They end with the call, so nothing that outlives them (a caller's
# HTTP client, say) may bind itself to one.
_TEMPORARY: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def on_temporary_loop() -> bool:
    """True inside a loop that `run_sync` made for one call (and closes after it)."""
    try:
        return asyncio.get_running_loop() in _TEMPORARY
    except RuntimeError:
        return False


async def _then_close(coro: Coroutine[Any, Any, T]) -> T:
    from assay._util.loop_local import close_loop_locals

    _TEMPORARY.add(asyncio.get_running_loop())
    try:
        return await coro
    finally:
        await close_loop_locals()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Drive `coro` to completion and return its result (or raise its exception).
    Clients created for the temporary loop are closed before it ends."""
    coro = _then_close(coro)
    if not _has_running_loop():
        return asyncio.run(coro)

    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def worker() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, coro)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=worker, name="assay-run-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
