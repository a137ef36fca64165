"""`Cascade`: a cheap judge first, a stronger judge only where the cheap one is unsure.

    llm = Cascade(first=small, then=strong, band=(0.2, 0.8))

A cascade is a judge like any other (`evaluate(..., llm=cascade)`, `metric.llm = cascade`): it takes
the same calls as an `LLM`. Each verdict call (a call that asks for token log-probabilities, as
every yes/no verdict of `assay.metrics.judge` does) is asked of `first`; the judge's probability
of the positive label is read at each verdict word of its answer ("1. yes" → P(yes) against
P(no)). If every verdict lies outside the band, `first`'s answer stands; if any lies inside
(`low <= p <= high`), or the answer holds no verdict word to read, the same call is asked of
`then` and its answer is used whole. With `tolerance=t`, a list keeps `first`'s answer while its
unsure verdicts are at most a share t of it: they could move the list's share of "yes" by no
more than t (a long answer's list of twelve statements is otherwise almost never free of one
unsure verdict, and escalates for a change the score hardly feels). A call that asks for no log-probabilities (a JSON answer, a
free-text draft) has no probability to read, so `then` answers it directly.

When the caller says how many verdicts it asks for (`verdicts_asked(k)`, as `ask_verdicts` does),
only the first k are read, fewer than k escalates, and `first` is stopped after the k-th line (its
stop sequence is a new line and the number k+1): a small judge copying the prompt's four-line
example would otherwise answer statements it was never given, which the metric would score as a
judge led off its task.

Why per call rather than per cell: the probability a decision rests on is the verdict's, and it is
only reachable in the call that produced it; a cell made of several verdict lists (faithfulness of
a long answer) escalates only its unsure lists. What was decided where is counted per call and per
cell (`Cascade.summary()`: "escalated 12 of 40 cells"), cells told apart by the engine's per-cell
usage meter; each answer's `model` names the judge that gave it. Cost and tokens of both judges are
charged to the cell as usual (each inner `LLM` keeps its own cache, retries and limits).
"""

from __future__ import annotations

import contextvars
import math
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from assay.errors import UsageError
from assay.models.llm import LLM
from assay.models.retry import RetryPolicy
from assay.models.types import ChatMessage, ModelResponse, TokenLogprob
from assay.models.usage import UsageMeter, current_meter

T = TypeVar("T", bound=BaseModel)

Decision = Literal["first", "then"]

# How many numbered verdicts the call being made asks for (set by `assay.metrics.judge`).
_asked: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "assay_verdicts_asked", default=None
)


@contextmanager
def verdicts_asked(count: int) -> Iterator[None]:
    """Calls made in this block ask for `count` numbered verdicts ("1. yes" ... ). A cascade then
    reads only those, and stops its first judge after the last one: a small judge that copies
    a longer example list would otherwise answer statements it was never given."""
    token = _asked.set(count)
    try:
        yield
    finally:
        _asked.reset(token)


@dataclass(frozen=True)
class CascadeSummary:
    """What a cascade decided where: calls and cells, and how many went to the stronger judge.

    `direct_calls` asked no probability (no verdict to read) and went to `then` without asking
    `first`; `escalated_calls` were asked of both. A cell counts as escalated when any of its
    verdict calls was asked again of `then` (a call sent to `then` directly had no first answer
    to overrule, so it does not make its cell escalated)."""

    calls: int = 0
    escalated_calls: int = 0
    direct_calls: int = 0
    cells: int = 0
    escalated_cells: int = 0

    @property
    def decided_by_first(self) -> int:
        return self.calls - self.escalated_calls - self.direct_calls

    @property
    def escalated_share(self) -> float | None:
        """Share of cells escalated (None before any cell)."""
        return self.escalated_cells / self.cells if self.cells else None

    def __str__(self) -> str:
        direct = f", {self.direct_calls} asked of it directly" if self.direct_calls else ""
        calls = f"{self.escalated_calls} of {self.calls} calls went to the stronger judge{direct}"
        if not self.cells:  # calls made outside an evaluation run
            return calls
        return (
            f"escalated {self.escalated_cells} of {self.cells} cells "
            f"({self.escalated_cells / self.cells:.0%}); {calls}"
        )


class Cascade(LLM):
    """Ask `first`; ask `then` where `first`'s verdict probability lies inside `band`.

    first, then: assay `LLM`s (e.g. `llm_factory(...)`), or model strings for `llm_factory`.
    band: (low, high), both in [0, 1]: a verdict with low <= P(positive) <= high is unsure.
    tolerance: the share of a call's verdicts that may be unsure without escalating it (0: none,
        the default; 0.25: one in four). A call with fewer verdicts than asked always escalates.
    labels: the positive and negative verdict words read from the answer ("yes", "no")."""

    def __init__(
        self,
        first: LLM | str,
        then: LLM | str,
        band: tuple[float, float] = (0.2, 0.8),
        *,
        tolerance: float = 0.0,
        labels: tuple[str, str] = ("yes", "no"),
    ) -> None:
        self.first = _judge(first, "first")
        self.then = _judge(then, "then")
        self.band = _checked_band(band)
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
            raise UsageError(f"Cascade tolerance= must be a number in [0, 1), got {tolerance!r}")
        if not 0 <= tolerance < 1:
            raise UsageError(f"Cascade tolerance= must be in [0, 1), got {tolerance!r}")
        self.tolerance = float(tolerance)
        if len(labels) != 2 or not all(isinstance(w, str) and w.strip() for w in labels):
            raise UsageError(
                f"Cascade labels= must be two words (positive, negative), got {labels!r}"
            )
        self.labels = (labels[0].strip().lower(), labels[1].strip().lower())
        if not getattr(self.first.provider.profile, "logprobs", False):
            raise UsageError(
                f"Cascade first= ({self.first.model}) gives no token log-probabilities, so its "
                "confidence cannot be read; use a judge whose provider returns them (the embedded "
                "judge, an OpenAI-compatible server)"
            )
        self.retry = RetryPolicy()  # the inner judges retry; kept for callers that read it
        self.usage = UsageMeter()  # both judges' usage, as answered through the cascade
        self.system_prompt = None
        self._lock = threading.Lock()
        self._counts = {"calls": 0, "escalated_calls": 0, "direct_calls": 0}
        self._cells: weakref.WeakKeyDictionary[UsageMeter, bool] = weakref.WeakKeyDictionary()
        self._cell_count = 0
        self._escalated_cells = 0

    # -- what the rest of assay reads of a judge ---------------------------------------------
    @property
    def model(self) -> str:
        return f"cascade({self.first.model} -> {self.then.model})"

    def __repr__(self) -> str:
        tolerance = f", tolerance={self.tolerance!r}" if self.tolerance else ""
        return f"Cascade(first={self.first!r}, then={self.then!r}, band={self.band!r}{tolerance})"

    def identity(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "first": self.first.identity(),
            "then": self.then.identity(),
            "band": list(self.band),
            "labels": list(self.labels),
        }
        if self.tolerance:  # left out at 0 so cascades made before the option keep their identity
            found["tolerance"] = self.tolerance
        return {"cascade": found}

    def consecutive(self) -> AbstractAsyncContextManager[None]:
        """Both judges' held slots: a slot is taken only by a call that is really sent."""
        return _both(self.first, self.then)

    async def aclose(self) -> None:
        await self.first.aclose()
        await self.then.aclose()

    # -- the cascade -------------------------------------------------------------------------
    async def agenerate(
        self,
        messages: str | list[ChatMessage] | list[dict[str, Any]],
        schema: type[T] | None = None,
        n: int = 1,
        *,
        allow_truncated: bool = False,
        grow_budget: bool = True,
        response_model: type[T] | None = None,
        **params: Any,
    ) -> Any:
        options: dict[str, Any] = {
            "allow_truncated": allow_truncated,
            "grow_budget": grow_budget,
            "response_model": response_model,
            **params,
        }
        if not reads_verdicts(schema, response_model, params):
            self._count("then", direct=True)
            return self._charged(await self.then.agenerate(messages, schema, n, **options))
        asked = _asked.get()
        answer = await self.first.agenerate(messages, schema, n, **stopped_after(options, asked))
        if not self.unsure(answer, asked):
            self._count("first")
            return self._charged(answer)
        self._count("then")
        return self._charged(await self.then.agenerate(messages, schema, n, **options))

    def unsure(self, response: ModelResponse, asked: int | None = None) -> bool:
        """Do more than `tolerance` of a generation's verdicts lie inside the band (at tolerance
        0: any), or has it fewer than `asked` (at least one) to read? With `asked`, verdicts
        after the asked ones are not read."""
        return any(
            unsure_verdicts(
                verdict_probabilities(generation.logprobs, *self.labels),
                asked,
                self.band,
                self.tolerance,
            )
            for generation in response.generations
        )

    def summary(self) -> CascadeSummary:
        with self._lock:
            return CascadeSummary(
                **self._counts, cells=self._cell_count, escalated_cells=self._escalated_cells
            )

    def _charged(self, response: Any) -> Any:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.usage.add(usage)
        return response

    def _count(self, decided: Decision, *, direct: bool = False) -> None:
        meter = current_meter()  # the engine's meter of the cell being scored, if any
        with self._lock:
            self._counts["calls"] += 1
            if decided == "then":
                self._counts["direct_calls" if direct else "escalated_calls"] += 1
            if meter is None:
                return
            escalated_before = self._cells.get(meter)
            if escalated_before is None:
                self._cell_count += 1
            escalated = decided == "then" and not direct  # asked again, not asked of then only
            if escalated and not escalated_before:
                self._escalated_cells += 1
            self._cells[meter] = bool(escalated_before) or escalated


def reads_verdicts(schema: Any, response_model: Any, params: dict[str, Any]) -> bool:
    """Whether a call has verdict probabilities to read: it asks for log-probabilities and no
    structured answer. Any other call goes to the stronger judge directly."""
    return schema is None and response_model is None and bool(params.get("logprobs"))


def stopped_after(options: dict[str, Any], asked: int | None) -> dict[str, Any]:
    """A first judge's call options: with `asked` verdicts asked, it stops after the last one
    ("\n4." ends a list of three), so it cannot answer statements it was never given."""
    if not asked:
        return options
    stops = options.get("stop") or []
    stops = [stops] if isinstance(stops, str) else list(stops)
    return {**options, "stop": [*stops, f"\n{asked + 1}."]}


def readable(found: Sequence[float], asked: int | None) -> list[float] | None:
    """The P(positive) list a cascade decides on, from what one answer holds: the asked verdicts,
    or None when it holds none or fewer than asked (every band escalates such an answer)."""
    if not found or (asked and len(found) < asked):
        return None
    return list(found[:asked] if asked else found)


def unsure_verdicts(
    found: Sequence[float], asked: int | None, band: tuple[float, float], tolerance: float
) -> bool:
    """The cascade's rule on one answer's P(positive) list: escalate when it holds fewer than
    `asked` verdicts (or none), or when more than `tolerance` of the asked ones lie in `band`.
    Kept apart from `Cascade` so a fit can route many bands over the same answers."""
    kept = readable(found, asked)
    if kept is None:
        return True
    low, high = band
    inside = sum(low <= p <= high for p in kept)
    return inside / len(kept) > tolerance


def asked_now() -> int | None:
    """How many numbered verdicts the call being made asks for (`verdicts_asked`), if said."""
    return _asked.get()


def verdict_probabilities(
    logprobs: Sequence[TokenLogprob] | None, positive: str, negative: str
) -> list[float]:
    """P(positive) against P(negative) at each token where the judge wrote one of the two words,
    from the token's alternatives; empty when there are no log-probabilities or no verdict."""
    found = []
    for token in logprobs or ():
        if token.token.strip().lower() not in (positive, negative):
            continue
        mass = {positive: 0.0, negative: 0.0}
        for alternative, logprob in {**token.top, token.token: token.logprob}.items():
            word = alternative.strip().lower()
            if word in mass:
                mass[word] += math.exp(logprob)
        found.append(mass[positive] / (mass[positive] + mass[negative]))
    return found


@asynccontextmanager
async def _both(first: LLM, then: LLM) -> Any:
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(first.consecutive())
        await stack.enter_async_context(then.consecutive())
        yield


def _judge(value: LLM | str, name: str) -> LLM:
    if isinstance(value, LLM):
        return value
    if isinstance(value, str):
        from assay.models.factory import llm_factory

        return llm_factory(value)
    raise UsageError(
        f"Cascade {name}= takes an LLM (llm_factory(...)) or a model string, "
        f"got {type(value).__name__}"
    )


def _checked_band(band: Any) -> tuple[float, float]:
    try:
        low, high = band
    except (TypeError, ValueError):
        raise UsageError(f"Cascade band= must be (low, high), got {band!r}") from None
    for edge in (low, high):
        if isinstance(edge, bool) or not isinstance(edge, (int, float)) or not 0 <= edge <= 1:
            raise UsageError(f"Cascade band= edges must be numbers in [0, 1], got {band!r}")
    if low > high:
        raise UsageError(f"Cascade band= low must not exceed high, got {band!r}")
    return float(low), float(high)


__all__ = ["Cascade", "CascadeSummary", "verdict_probabilities", "verdicts_asked"]
