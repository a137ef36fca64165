"""`Replay`: batch mode on a Ray worker, where cells are scored but no batch is submitted.

A batched Ray run (docs/ray.md) submits its batches from the driver; the workers score cells in
passes. In each pass a worker runs its cells with batch twins of the judges (`engine/batch/
llm.py`) whose queue is a `Replay` instead of the run's `Waves`: a request the driver already has
the answer to (from an earlier wave) is answered at once, from the table the pass was given, and
any other request is noted and its call waits. Once every cell in flight waits on such a request
and nothing has moved for a tick (`settled`), the pass ends: the cells that finished are written,
the others are cancelled and reported as pending along with the requests they asked. The driver
puts those requests in the next wave, and the next pass runs the pending cells again from the
start with the bigger table, so each cell's calls come out in the same order and with the same
request keys as in a local batch run, and its usage is charged once, at the price of how each
answer came (the cancelled attempts charged nothing: they got no answer).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable

import anyio

from assay.engine.batch.options import BatchOptions
from assay.engine.batch.waves import _CELL, Cell, Waves
from assay.models.providers.batch_api import BatchClient
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price

Slot = tuple[str, str]  # (endpoint key, request key)
# A wave's outcome for one request: the answer and whether it came live, or the error that stands.
Answer = tuple[ModelResponse, bool] | BaseException


class Replay(Waves):
    """The queue of one pass on a worker (see the module). Keeps `Waves`' count of the cells in
    flight and of those waiting; never submits anything."""

    def __init__(self, answers: dict[Slot, Answer]) -> None:
        super().__init__(BatchOptions())
        self.answers = answers
        self.missing: dict[Slot, ModelRequest] = {}
        self.missing_cells: dict[Slot, set[Cell]] = {}
        self.moves = 0  # requests asked and cells ended: settled only when this stands still
        self._seen = -1

    async def ask(
        self,
        client: BatchClient,
        endpoint: str,
        key: str,
        request: ModelRequest,
        live: Callable[[ModelRequest], Awaitable[ModelResponse]],
        price: Price | None,
    ) -> tuple[ModelResponse, bool]:
        self.moves += 1
        slot = (endpoint, key)
        known = self.answers.get(slot)
        if isinstance(known, BaseException):
            raise copy.copy(known)  # each cell its own exception object (tracebacks differ)
        if known is not None:
            return known
        self.missing.setdefault(slot, request)
        cell = _CELL.get()
        if cell is not None:
            self.missing_cells.setdefault(slot, set()).add(cell)
        await anyio.sleep_forever()  # the pass ends by cancelling this cell
        raise AssertionError("unreachable")

    def ended(self) -> None:
        """A cell of the pass finished."""
        self.moves += 1

    def settled(self) -> bool:
        """Every cell in flight waits on an unanswered request and nothing moved since the last
        look (a cell woken by an answer in the same turn would otherwise be taken as waiting)."""
        blocked = sum(1 for cell in self._blocked if cell is not None)
        still = self.moves == self._seen
        self._seen = self.moves
        return still and bool(self._active) and blocked >= self._active

    def asked(self) -> dict[Slot, tuple[ModelRequest, list[Cell]]]:
        """The requests this pass could not answer, with the cells that asked them."""
        return {
            slot: (request, sorted(self.missing_cells.get(slot, ())))
            for slot, request in self.missing.items()
        }


__all__ = ["Answer", "Replay", "Slot"]
