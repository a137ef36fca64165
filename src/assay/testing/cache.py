"""The response cache the pytest plugin's judge uses: record / replay, counts, and repeats kept apart.

- Record (the default): answers are read when stored and stored when new.
- Replay: only read; a request with no stored answer raises `CacheMiss` and makes no call
  (`ResponseCache(replay_only=True)`), and the miss is counted so the plugin fails the test.
- Repeat `j` of a re-sampled evaluation (`judging_repeat(j)`) is asking `j` of
  `assay.models.asking` (the judge is sent seed + j, and samples if it was configured
  deterministic), so a second judgement of a row is a new question to the judge rather than the
  first answer again, exactly as `evaluate(repeats=N)` asks. Its answers are also stored under
  keys of their own, so a replayed CI run gets every repeat exactly as recorded. Repeat 0 is an
  ordinary request with the plain keys (the same answers as an ordinary `evaluate`).
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from assay.models.asking import asking_again
from assay.models.cache import CacheMiss, ResponseCache
from assay.models.types import ModelResponse

_repeat: contextvars.ContextVar[int] = contextvars.ContextVar("assay_judging_repeat", default=0)


@contextmanager
def judging_repeat(index: int) -> Iterator[None]:
    """Within this block, judge answers are those of repeat `index` (0 = the first judgement)."""
    token = _repeat.set(index)
    try:
        with asking_again(index) if index else nullcontext():
            yield
    finally:
        _repeat.reset(token)


def current_repeat() -> int:
    return _repeat.get()


class RepeatCache(ResponseCache):
    """A `ResponseCache` whose chat answers are kept per repeat, counting replay misses."""

    def __init__(self, path: str | Path, *, replay_only: bool = False) -> None:
        super().__init__(path, replay_only=replay_only)
        self._count_lock = threading.Lock()
        self.misses = 0

    @staticmethod
    def _keyed(key: str) -> str:
        repeat = _repeat.get()
        if not repeat:
            return key
        return hashlib.sha256(f"{key}:repeat={repeat}".encode()).hexdigest()

    def get_response(self, key: str) -> ModelResponse | None:
        try:
            return super().get_response(self._keyed(key))
        except CacheMiss:
            with self._count_lock:
                self.misses += 1
            raise

    def put_response(self, key: str, model: str, response: ModelResponse) -> None:
        super().put_response(self._keyed(key), model, response)

    def get_vector(self, key: str) -> list[float] | None:
        try:
            return super().get_vector(key)  # embeddings are deterministic: one per text
        except CacheMiss:
            with self._count_lock:
                self.misses += 1
            raise


__all__ = ["RepeatCache", "current_repeat", "judging_repeat"]
