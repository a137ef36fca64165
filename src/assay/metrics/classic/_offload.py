"""How the classic metrics keep the event loop free, and refuse work they cannot bound.

Their computations are synchronous CPU work inside an async `_ascore`. Small inputs are scored
inline. Beyond `OFF_LOOP_CHARS` characters `run` moves the work to a worker thread
(`anyio.to_thread.run_sync(..., abandon_on_cancel=True)`), so the event loop keeps running and the
engine's per-cell timeout fires on time: a cancelled cell returns at once and leaves the thread to
finish on its own. That is only safe because every computation here is bounded: the quadratic ones
refuse inputs beyond a size limit (`check_product`, a typed `MetricError`), never cutting or
approximating them.

A thread frees the loop only if the work lets go of the GIL. Pure Python does, every few
milliseconds; rapidfuzz's single-pair functions hold it for the whole comparison (seconds on
300,000-character texts), so large pairs of the integer-valued measures go through
`rapidfuzz.process.cdist`, which releases it (`released_gil`). Modules that take seconds to import (rouge-score pulls in nltk, datacompy pandas)
are imported in a thread the first time (`load`).
"""

from __future__ import annotations

import functools
import importlib
import itertools
import sys
from collections.abc import Callable
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
    else in a worker thread that a cancelled caller abandons. Work that is slow for its size
    (quadratic pure Python) passes a lower `inline_up_to`."""
    if size <= inline_up_to:
        return function(*args)
    return await anyio.to_thread.run_sync(function, *args, abandon_on_cancel=True)


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

    grid = process.cdist([a], [b], scorer=scorer, workers=1, dtype=dtype or np.float64)
    return grid[0, 0].item()


__all__ = [
    "OFF_LOOP_CHARS",
    "check_limit",
    "check_product",
    "load",
    "released_gil",
    "run",
    "size_of",
]
