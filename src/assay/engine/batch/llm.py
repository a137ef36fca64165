"""`BatchLLM`: a run's judge in batch mode, and the metrics given it.

A `BatchLLM` is a twin of the judge `LLM` the metric was given (same provider, cache, identity,
so the same request keys and cached answers) with one layer changed: where the live model takes
a rate-limiter slot and sends the request, the twin queues it in the run's `Waves` and waits for
the batch's answer. Everything above that layer is the live model's own code: the structured-
output ladder, the completeness check, shared calls, the run's answers and the cache (a cached
answer is never queued), the budget check. Retries are the waves' (a failed line goes into the
next batch), so the twin makes one attempt per call; the rate limiter and the per-attempt
deadline do not apply to a batch.

An answer is charged at the batch price (`BatchClient.price`, half the list price), and an
answer that came live (`fallback="live"`) at the live price: `price` reads which one the current
call got (a context variable set in `_limited_call`, read by `LLM._call_once` in the same task
right after it returns).
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from assay.engine.batch.waves import Waves
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.models.cache import request_key
from assay.models.llm import LLM
from assay.models.providers.batch_api import BatchClient, batch_client_for
from assay.models.retry import RetryPolicy, call_with_retry
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price, current_budget

_ANSWERED_LIVE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "assay_batch_answered_live", default=False
)


class BatchLLM(LLM):
    """A judge whose uncached calls go through its provider's batch API (see the module)."""

    _original: LLM
    _waves: Waves
    _client: BatchClient
    _endpoint_key: str
    _live_price: Price | None
    _batch_price: Price | None

    # LLM sets its price once; the twin's depends on how the current call was answered.
    @property
    def price(self) -> Price | None:
        return self._live_price if _ANSWERED_LIVE.get() else self._batch_price

    @price.setter
    def price(self, value: Price | None) -> None:
        self._live_price = value
        self._batch_price = self._client.price(value)

    @property
    def batch_price(self) -> Price | None:
        return self._batch_price

    async def _call(
        self, request: ModelRequest, *, accept_truncated: bool = False
    ) -> ModelResponse:
        with self._waves.waiting():
            return await super()._call(request, accept_truncated=accept_truncated)

    async def _limited_call(self, request: ModelRequest) -> ModelResponse:
        _ANSWERED_LIVE.set(False)
        budget = current_budget()
        if budget is not None:
            budget.check()
        key = request_key(self.identity(), request)
        response, live = await self._waves.ask(
            self._client, self._endpoint_key, key, request, self._ask_live, self._batch_price
        )
        _ANSWERED_LIVE.set(live)
        return response

    async def _ask_live(self, request: ModelRequest) -> ModelResponse:
        """The live model's own path (limiter, deadline, retries), for `fallback="live"`."""
        original = self._original
        return await call_with_retry(lambda: original._limited_call(request), original.retry)

    def consecutive(self) -> AbstractAsyncContextManager[None]:
        return nullcontext()  # no slot to hold: a batch has no server-side prefix to keep


def batch_twin(llm: LLM, waves: Waves) -> BatchLLM:
    """The `BatchLLM` of `llm`: a `UsageError` in one line when its provider has no batch API."""
    client = batch_client_for(llm.provider)
    twin = BatchLLM.__new__(BatchLLM)
    state = dict(llm.__dict__)
    live_price = state.pop("price", None)
    twin.__dict__.update(state)
    twin._original = llm
    twin._waves = waves
    twin._client = client
    twin._endpoint_key = json.dumps(llm.identity(), sort_keys=True, default=str)
    twin.price = live_price
    twin.retry = RetryPolicy(max_attempts=1)  # a failed line is retried by the next wave
    return twin


def batched_metrics(metrics: list[Metric], waves: Waves) -> list[Metric]:
    """Copies of `metrics` whose judges are batch twins (one twin per judge object); refuses,
    before any work, a judge that cannot be batched."""
    twins: dict[int, BatchLLM] = {}
    batched = []
    for metric in metrics:
        changes: dict[str, Any] = {}
        for spec in dataclasses.fields(metric):
            value = getattr(metric, spec.name, None)
            if isinstance(value, LLM):
                if id(value) not in twins:
                    twins[id(value)] = batch_twin(value, waves)
                changes[spec.name] = twins[id(value)]
        if metric.needs_llm and not changes:
            judge = getattr(metric, "llm", None)
            raise UsageError(
                f"batch mode: metric {metric.name}'s judge is a {type(judge).__name__}, which "
                "cannot be batched; give it a model string such as openai/gpt-4o-mini"
            )
        if not changes:
            batched.append(metric)
            continue
        copy = dataclasses.replace(metric, **changes)
        # Private state that is not a field (e.g. edited prompts) travels with the copy.
        copy.__dict__.update({k: v for k, v in metric.__dict__.items() if k.startswith("_")})
        batched.append(copy)
    return batched


__all__ = ["BatchLLM", "batch_twin", "batched_metrics"]
