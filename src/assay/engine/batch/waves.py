"""`Waves`: a run's model requests gathered into provider batches, one wave after another.

Metrics await model calls as in a live run. In batch mode their judge is a `BatchLLM`
(`engine/batch/llm.py`): a request that the run's answers and the cache cannot answer is queued
here (`ask`) instead of sent, and its caller waits. `run` watches the queue: once every cell in
flight waits for an answer (or nothing new was queued for `settle` seconds), the queue is one
wave. Each distinct request of the wave goes into a batch (identical requests once), the batches
are polled until they end, and the answers wake their callers, whose next calls (the verdicts
after a claim split, a repair after an unparseable answer, a bigger budget after a cut-off one)
queue up the next wave.

Before submitting, each request is looked up in the run directory's journal (`journal.py`): a
batch already carrying it (a run killed while it was in flight, resumed) is polled instead, so
no request is paid for twice. A line that failed for a passing reason, or that an expired batch
never reached, goes into the next wave (or, with `fallback="live"`, is asked live at once); after
`max_attempts` batches, or at once for an error a retry cannot fix (a 400), its error stands and
the cell ends as a typed error, as in a live run. Under a budget, a request whose estimated batch
cost exceeds what is left is not submitted (`BudgetExhausted`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from assay.engine.batch.journal import BatchJournal
from assay.engine.batch.options import BatchOptions, batch_options
from assay.errors import BudgetExhausted, ModelError, ProviderError
from assay.models.providers.batch_api import BatchClient, BatchState
from assay.models.retry import RetryPolicy, call_with_retry
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price, current_budget

Cell = tuple[int, str]
_CELL: contextvars.ContextVar[Cell | None] = contextvars.ContextVar(
    "assay_batch_cell", default=None
)
_SHOWN = {"validating": "validating", "in_progress": "in progress", "finalizing": "finalizing"}


@dataclass(eq=False)
class _Ask:
    """One distinct request waiting for its answer: (response, answered live)."""

    client: BatchClient
    endpoint: str
    key: str
    request: ModelRequest
    future: asyncio.Future[tuple[ModelResponse, bool]]
    live: Callable[[ModelRequest], Awaitable[ModelResponse]]
    price: Price | None
    attempts: int = 0
    cells: set[Cell] = field(default_factory=set)

    @property
    def custom_id(self) -> str:
        # The request key's start: the same in every run, within Anthropic's 64 characters.
        return "r" + self.key[:40]


class Waves:
    """The batch coordinator of one run."""

    def __init__(self, options: BatchOptions) -> None:
        self.options = options
        self.journal = BatchJournal(None)
        self._queue: dict[tuple[str, str], _Ask] = {}  # waiting for the next wave
        self._asked: dict[tuple[str, str], _Ask] = {}  # every request not yet answered
        self._active = 0  # cells in flight
        self._blocked: Counter[Cell | None] = Counter()  # calls waiting, by cell
        self._last = time.monotonic()
        self._states: dict[str, BatchState] = {}
        self._report: Callable[[str], None] = lambda text: None
        self.waves = 0

    # -- what the engine and the judges tell it ------------------------------------------
    @contextmanager
    def cell(self, row: int, metric: str) -> Iterator[None]:
        """A cell in flight: the wave waits for it to block on a request (or to finish)."""
        token = _CELL.set((row, metric))
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            _CELL.reset(token)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A call of the current cell is waiting (for the queue, or for an identical call)."""
        cell = _CELL.get()
        self._blocked[cell] += 1
        try:
            yield
        finally:
            self._blocked[cell] -= 1
            if not self._blocked[cell]:
                del self._blocked[cell]

    async def ask(
        self,
        client: BatchClient,
        endpoint: str,
        key: str,
        request: ModelRequest,
        live: Callable[[ModelRequest], Awaitable[ModelResponse]],
        price: Price | None,
    ) -> tuple[ModelResponse, bool]:
        """Queue `request` for the next wave (once, however many ask it); its answer and whether
        it was asked live."""
        slot = (endpoint, key)
        entry = self._asked.get(slot)
        loop = asyncio.get_running_loop()
        if entry is None or entry.future.get_loop() is not loop:  # (a cancelled earlier run's)
            future: asyncio.Future[tuple[ModelResponse, bool]] = loop.create_future()
            # Retrieved even when every caller has gone (a cancelled run): no warning at exit.
            future.add_done_callback(lambda done: done.cancelled() or done.exception())
            entry = _Ask(client, endpoint, key, request, future, live, price)
            self._asked[slot] = self._queue[slot] = entry
            self._last = time.monotonic()
        cell = _CELL.get()
        if cell is not None:
            entry.cells.add(cell)
        return await asyncio.shield(entry.future)

    # -- the loop -------------------------------------------------------------------------
    async def run(self, run_dir: Path | None, report: Callable[[str], None] | None = None) -> None:
        """Form and send waves until cancelled (the engine cancels it when the cells are done)."""
        self.journal = BatchJournal(run_dir / "batches.jsonl" if run_dir is not None else None)
        # What an earlier, cancelled run on another loop left; this run's cells have not started.
        self._queue, self._asked = {}, {}
        if report is not None:
            self._report = report
        tick = min(0.05, self.options.poll_interval)
        try:
            while True:
                await anyio.sleep(tick)
                if self._queue and self._ready():
                    wave, self._queue = list(self._queue.values()), {}
                    self.waves += 1
                    self._states = {}  # the progress line shows this wave's batches
                    await self._send(wave)
        finally:
            self.journal.close()

    def _ready(self) -> bool:
        blocked = sum(1 for cell in self._blocked if cell is not None)
        return blocked >= self._active or time.monotonic() - self._last >= self.options.settle

    async def _send(self, wave: list[_Ask]) -> None:
        by_endpoint: dict[str, list[_Ask]] = {}
        for entry in wave:
            by_endpoint.setdefault(entry.endpoint, []).append(entry)
        async with anyio.create_task_group() as group:
            for entries in by_endpoint.values():
                group.start_soon(self._send_endpoint, entries)

    async def _send_endpoint(self, entries: list[_Ask]) -> None:
        client, endpoint = entries[0].client, entries[0].endpoint
        carried: dict[str, dict[str, _Ask]] = {}
        fresh = []
        for entry in entries:
            found = self.journal.carrier(endpoint, entry.key)
            if found is not None:
                carried.setdefault(found[0], {})[found[1]] = entry
            else:
                fresh.append(entry)
        fresh = await self._recovered(client, endpoint, fresh, carried)
        fresh = self._within_budget(fresh)
        size = self.options.max_requests
        for start in range(0, len(fresh), size):
            lines = {entry.custom_id: entry for entry in fresh[start : start + size]}
            carrying = {custom_id: entry.request for custom_id, entry in lines.items()}
            keys = {custom_id: entry.key for custom_id, entry in lines.items()}
            uploads: list[str] = []

            def uploaded(
                upload: str, keys: dict[str, str] = keys, into: list[str] = uploads
            ) -> None:
                self.journal.uploaded(upload, endpoint, keys)
                into.append(upload)

            try:
                batch_id = await self._managed(functools.partial(client.submit, carrying, uploaded))
            except ModelError as exc:
                for entry in lines.values():
                    self._fail(entry, exc)
                continue
            upload = uploads[-1] if uploads else None
            self.journal.submitted(batch_id, endpoint, keys, _cells(lines.values()), upload)
            carried[batch_id] = lines
        async with anyio.create_task_group() as group:
            for batch_id, lines in carried.items():
                group.start_soon(self._follow, client, batch_id, lines)

    async def _recovered(
        self,
        client: BatchClient,
        endpoint: str,
        fresh: list[_Ask],
        carried: dict[str, dict[str, _Ask]],
    ) -> list[_Ask]:
        """Of `fresh`, those no batch was made for: a request in an upload no batch line names
        (a run killed between the provider making the batch and the journal hearing of it) is
        looked up at the provider first, and followed in the batch found."""
        waiting: dict[str, list[_Ask]] = {}
        left = []
        for entry in fresh:
            upload = self.journal.pending_upload(endpoint, entry.key)
            if upload is None:
                left.append(entry)
            else:
                waiting.setdefault(upload, []).append(entry)
        for upload, entries in waiting.items():
            try:
                batch_id = await self._managed(functools.partial(client.find, upload))
            except ModelError:
                batch_id = None
            if batch_id is None:
                self.journal.abandoned(upload)
                left.extend(entries)
                continue
            keys = self.journal.uploads[upload]
            self.journal.submitted(batch_id, endpoint, keys, _cells(entries), upload)
            carried[batch_id] = {entry.custom_id: entry for entry in entries}
        return left

    async def _follow(self, client: BatchClient, batch_id: str, lines: dict[str, _Ask]) -> None:
        """Poll one batch until it ends, then hand each line's answer to its callers."""
        try:
            while True:
                state = await self._managed(lambda: client.poll(batch_id))
                self._states[batch_id] = state
                self._show()
                if state.ended:
                    break
                await anyio.sleep(self.options.poll_interval)
            answers = await self._managed(
                lambda: client.results(state, {c: e.request for c, e in lines.items()})
            )
        except ModelError as exc:
            if not (isinstance(exc, ProviderError) and exc.status == 404):
                for entry in lines.values():
                    self._fail(entry, exc)
                return
            # The provider no longer has it (answers past their keeping time): asked anew, as
            # a failed line is (so an endpoint that never keeps a batch does not loop).
            self.journal.gone(batch_id)
            gone = f"batch {batch_id} is gone at the provider ({exc})"
            live = [e for e in lines.values() if self._retry(e, ProviderError(gone, status=None))]
        else:
            live = self._answered(batch_id, state, answers, lines)
        async with anyio.create_task_group() as group:
            for entry in live:
                group.start_soon(self._ask_live, entry)

    def _answered(
        self,
        batch_id: str,
        state: BatchState,
        answers: dict[str, ModelResponse | ModelError],
        lines: dict[str, _Ask],
    ) -> list[_Ask]:
        """Hand an ended batch's answers to their callers; the requests to ask live now."""
        failed, live = [], []
        for custom_id, entry in lines.items():
            answer = answers.get(custom_id)
            if isinstance(answer, ModelResponse):
                self._resolve(entry, answer, False)
                continue
            failed.append(custom_id)
            error = answer or ProviderError(
                f"batch {batch_id} ended {state.status} before answering this request", status=None
            )
            if self._retry(entry, error):
                live.append(entry)
        self.journal.ended(batch_id, state.status, failed)
        self._show()
        return live

    # -- outcomes of one request ----------------------------------------------------------
    def _retry(self, entry: _Ask, error: ModelError) -> bool:
        """Put a failed request back (True: to be asked live now), or let its error stand."""
        entry.attempts += 1
        if not error.transient:
            self._fail(entry, error)
        elif self.options.fallback == "live":
            return True
        elif entry.attempts < self.options.max_attempts:
            self._requeue(entry)
        else:
            # (The judge's one-attempt retry layer sets `attempts` to 1 on the way out, so the
            # batches it went in are said in the message.)
            error.args = (f"{error} (asked in {entry.attempts} batches)",)
            self._fail(entry, error)
        return False

    def _requeue(self, entry: _Ask) -> None:
        self._queue[(entry.endpoint, entry.key)] = entry
        self._last = time.monotonic()

    async def _ask_live(self, entry: _Ask) -> None:
        try:
            response = await entry.live(entry.request)
        except ModelError as exc:
            self._fail(entry, exc)
            return
        self._resolve(entry, response, True)

    def _resolve(self, entry: _Ask, response: ModelResponse, live: bool) -> None:
        self._asked.pop((entry.endpoint, entry.key), None)
        if not entry.future.done():
            entry.future.set_result((response, live))

    def _fail(self, entry: _Ask, error: BaseException) -> None:
        self._asked.pop((entry.endpoint, entry.key), None)
        if not entry.future.done():
            entry.future.set_exception(error)

    def _within_budget(self, entries: list[_Ask]) -> list[_Ask]:
        """The requests whose estimated batch cost fits in what is left of the run's budget."""
        budget = current_budget()
        if budget is None:
            return entries
        try:
            budget.check()  # spent, or the run was told to stop (Ctrl-C): nothing more is sent
        except ModelError as exc:
            for entry in entries:
                self._fail(entry, exc)
            return []
        left = budget.limit - budget.spent
        kept = []
        for entry in entries:
            cost = _estimated_cost(entry)
            if cost > left:
                self._fail(
                    entry,
                    BudgetExhausted(
                        f"not submitted: its estimated batch cost ${cost:.4f} is more than the "
                        f"${max(left, 0.0):.4f} left of the budget of ${budget.limit:g}"
                    ),
                )
                continue
            left -= cost
            kept.append(entry)
        return kept

    async def _managed(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """A management call (submit, poll, read), retried while its failure is a passing one."""
        wait = min(1.0, self.options.poll_interval)
        policy = RetryPolicy(max_attempts=5, initial_wait=wait, max_wait=max(wait, 30.0))
        return await call_with_retry(call, policy)

    def _show(self) -> None:
        phases: Counter[str] = Counter()
        done = total = 0
        for state in self._states.values():
            phases["completed" if state.ended else _SHOWN.get(state.phase, state.phase)] += 1
            done, total = done + state.done + state.failed, total + state.total
        counts = ", ".join(f"{n} {phase}" for phase, n in sorted(phases.items()))
        self._report(f"batch wave {self.waves}: {counts or 'submitting'}; {done}/{total} requests")


def _cells(entries: Any) -> list[list[Any]]:
    """The cells that asked these requests, as the journal records them."""
    return [list(cell) for cell in sorted({cell for entry in entries for cell in entry.cells})]


def waves_for(batch: Any) -> Waves | None:
    """`evaluate(batch=...)`: the run's coordinator, None for a live run. (With a `RayExecutor`
    it runs on the driver: `engine/ray/batch.py`.)"""
    options = batch_options(batch)
    return None if options is None else Waves(options)


def _estimated_cost(entry: _Ask) -> float:
    """A request's cost at batch prices, by the limiter's rule: ~4 characters a token in, its
    max_tokens (else 512) out."""
    if entry.price is None:
        return 0.0
    chars = sum(len(json.dumps(m.content)) for m in entry.request.messages)
    output = int(entry.request.params.get("max_tokens") or 512) * entry.request.n
    return entry.price.cost(chars // 4, output)


__all__ = ["Waves", "waves_for"]
