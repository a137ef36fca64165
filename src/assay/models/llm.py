"""`LLM`: the one path every model call takes.

    agenerate(messages, schema=None, n=1, allow_truncated=False, grow_budget=True, **params)
      └─ structured-output ladder (when a schema is given): mode choice, parse, repair
          └─ completeness: an answer cut off at its token limit is asked again with twice the
             budget (unless grow_budget=False: `OutputTruncated` after one attempt), then
             `OutputTruncated`; never returned as if complete (unless allowed, for callers
             that read only the first words)
              └─ shared calls: identical requests in flight share one call (any thread, any loop);
                 a repeated cell's asking i is a request of its own (its seed: `asking.py`)
                  └─ answers of this run, then the cache ── hit: no call, counted as cached
                      └─ budget check
                          └─ retry (backoff, Retry-After)
                              └─ rate limiter (RPM, TPM, AIMD concurrency; one per endpoint)
                                  └─ per-attempt deadline ── provider.complete(request)

Usage is charged to the current cell's meter and to the LLM's own running total. What is shared
by every LLM object of one endpoint (limiter, calls in flight) lives in `endpoint.py` and is
thread-safe; what is bound to an event loop (HTTP clients) is kept per loop by the providers.
A cut-off answer is never returned as a complete one: cached, it keeps its finish_reason.
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel

from assay._util.sync import run_sync
from assay.errors import (
    ModelTimeout,
    OutputParseError,
    OutputTruncated,
    ProviderError,
    RateLimited,
    UsageError,
)
from assay.models.asking import for_current_asking
from assay.models.cache import AnswerStore, request_key
from assay.models.endpoint import Endpoint, run_answers, shared_endpoint
from assay.models.limits import Limits, RateLimiter
from assay.models.providers.base import Provider
from assay.models.retry import RetryPolicy, call_with_retry
from assay.models.structured import (
    ParseFailure,
    parse_output,
    repair_messages,
    schema_of,
    with_schema_instruction,
)
from assay.models.types import (
    ChatMessage,
    ModelRequest,
    ModelResponse,
    OutputMode,
    OutputSpec,
    Usage,
    as_messages,
)
from assay.models.usage import Price, UsageMeter, current_budget, current_meter, lookup_price

T = TypeVar("T", bound=BaseModel)

# Statuses with which servers reject a request shape they do not support (e.g. response_format).
_UNSUPPORTED_STATUSES = frozenset({400, 404, 415, 422, 501})


class LLM:
    """A judge model: a provider wrapped in retries, limits, cache, usage and structured output."""

    def __init__(
        self,
        provider: Provider,
        *,
        cache: AnswerStore | None = None,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        price: Price | None = None,
        default_params: dict[str, Any] | None = None,
        max_output_tokens: int = 16384,
        attempt_timeout: float | None = None,
        system_prompt: str | None = None,
    ) -> None:
        if attempt_timeout is not None and not attempt_timeout > 0:
            raise ValueError(
                f"attempt_timeout must be a positive number of seconds, got {attempt_timeout!r}"
            )
        self.provider = provider
        self.cache = cache
        self.retry = retry or RetryPolicy()
        # Shared with every other LLM object of the same endpoint and limits (see endpoint.py).
        self.endpoint: Endpoint = shared_endpoint(provider.endpoint_address(), limits or Limits())
        self.price = (
            price if price is not None else (provider.price or lookup_price(provider.model))
        )
        self.default_params = {"temperature": 0.0, **(default_params or {})}
        self.max_output_tokens = max_output_tokens
        # A whole attempt (connect, wait, read every byte) ends by this deadline: a server that
        # drips its answer a byte at a time never trips the HTTP client's per-read timeout.
        self.attempt_timeout = attempt_timeout
        self.usage = UsageMeter()
        self._mode: OutputMode | None = None  # the structured-output mode that works, once known
        # llm_factory(system_prompt=...): leads every request's messages, so it is in the cache key.
        self.system_prompt = system_prompt

    @property
    def limiter(self) -> RateLimiter:
        return self.endpoint.limiter

    @property
    def model(self) -> str:
        return self.provider.model

    def __repr__(self) -> str:
        return f"LLM(provider={self.provider.name!r}, model={self.model!r})"

    def identity(self) -> dict[str, Any]:
        return self.provider.identity()

    # -- public calls ---------------------------------------------------------------------
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
        """Generate `n` completions. With `schema`, each generation's `.parsed` is an instance of it.

        An answer that stops at its token limit is asked again with twice the budget (up to
        `max_output_tokens`), then raises `OutputTruncated` with the partial text as `raw`.
        `allow_truncated=True` returns a cut-off answer as it is, for callers that read only its
        first words (a rating label); it never applies to structured answers.
        `grow_budget=False` raises `OutputTruncated` on the first cut-off answer instead of asking
        again: for callers whose budget is already what a good answer needs, so a cut-off means
        a runaway that a bigger budget would only make dearer. Its usage is still counted.

        `response_model=Model` is Ragas' spelling (`llm.generate(prompt, response_model=Model)`)
        and returns the instance itself rather than the `ModelResponse`."""
        if response_model is not None:
            if schema is not None:
                raise UsageError("give schema= or response_model=, not both")
            response = await self.agenerate(
                messages,
                response_model,
                n,
                allow_truncated=allow_truncated,
                grow_budget=grow_budget,
                **params,
            )
            return response.parsed
        chat = as_messages(messages)
        if self.system_prompt:
            chat = _with_system_prompt(chat, self.system_prompt)
        merged = {**self.default_params, **params}
        if schema is None:
            if allow_truncated:
                return await self._call(
                    ModelRequest(tuple(chat), n=n, params=merged), accept_truncated=True
                )
            return await self._call_until_complete(chat, None, n, merged, grow_budget)
        return await self._structured(chat, schema, n, merged, grow_budget)

    def generate(
        self,
        messages: Any,
        schema: type[T] | None = None,
        n: int = 1,
        *,
        allow_truncated: bool = False,
        grow_budget: bool = True,
        response_model: type[T] | None = None,
        **params: Any,
    ) -> Any:
        """Synchronous twin of `agenerate` (same arguments, same results)."""
        return run_sync(
            self.agenerate(
                messages,
                schema,
                n,
                allow_truncated=allow_truncated,
                grow_budget=grow_budget,
                response_model=response_model,
                **params,
            )
        )

    # -- structured output ----------------------------------------------------------------
    def _modes(self) -> list[OutputMode]:
        modes = list(self.provider.profile.output_modes)
        if self._mode is None and self.cache is not None:
            # A previous run may have learnt which rung works; the cached answers were made with it.
            remembered = self.cache.get_meta(self._mode_key())
            self._mode = remembered if remembered in modes else None
        if self._mode in modes:
            modes = modes[modes.index(self._mode) :]
        return modes

    def _mode_key(self) -> str:
        return "output_mode:" + json.dumps(self.identity(), sort_keys=True)

    def _remember_mode(self, mode: OutputMode) -> None:
        if self._mode != mode:
            self._mode = mode
            if self.cache is not None:
                self.cache.put_meta(self._mode_key(), mode)

    async def _structured(
        self,
        chat: list[ChatMessage],
        schema: type[T],
        n: int,
        params: dict[str, Any],
        grow_budget: bool = True,
    ) -> ModelResponse:
        name, json_schema = schema_of(schema)
        modes = self._modes()
        for position, mode in enumerate(modes):
            output = OutputSpec(name=name, schema=json_schema, mode=mode)
            prompt = with_schema_instruction(chat, json_schema, mode)
            try:
                response = await self._call_until_complete(prompt, output, n, params, grow_budget)
            except ProviderError as exc:
                if (
                    exc.status in _UNSUPPORTED_STATUSES
                    and position + 1 < len(modes)
                    and not isinstance(exc, RateLimited)
                ):
                    continue  # this server does not accept that request shape; try the next rung
                raise
            self._remember_mode(mode)
            usage = response.usage
            parsed = []
            for generation in response.generations:
                value, repair_usage = await self._parse_or_repair(
                    prompt, output, generation.text, schema, params, grow_budget
                )
                parsed.append(value)
                usage = usage + repair_usage
            generations = [
                g.model_copy(update={"parsed": p})
                for g, p in zip(response.generations, parsed, strict=True)
            ]
            return response.model_copy(update={"generations": generations, "usage": usage})
        raise AssertionError(
            "unreachable: the last mode either returns or raises"
        )  # pragma: no cover

    async def _call_until_complete(
        self,
        prompt: list[ChatMessage],
        output: OutputSpec | None,
        n: int,
        params: dict[str, Any],
        grow_budget: bool = True,
    ) -> ModelResponse:
        """Call; if an answer was cut off at the token limit, retry with twice the budget
        (unless `grow_budget` is off: then the first cut-off raises)."""
        budget = params.get("max_tokens")
        spent = Usage()  # answers cut off before the one returned still count in its usage
        for _ in range(3 if grow_budget else 1):
            request_params = dict(params) if budget is None else {**params, "max_tokens": budget}
            response = await self._call(
                ModelRequest(tuple(prompt), n=n, params=request_params, output=output)
            )
            if not _truncated(response):
                return (
                    response.model_copy(update={"usage": spent + response.usage})
                    if spent.requests
                    else response
                )
            spent = spent + response.usage
            tried = budget or max(256, response.usage.output_tokens // max(1, n))
            if not grow_budget or tried >= self.max_output_tokens:
                break
            budget = min(self.max_output_tokens, tried * 2)
        tail = "" if grow_budget else " (no bigger budget asked: grow_budget=False)"
        raise OutputTruncated(
            f"the answer hit the token limit (last max_tokens={tried}) and was cut off; not "
            f"used{tail}",
            raw=response.generations[0].text,
        )

    async def _parse_or_repair(
        self,
        prompt: list[ChatMessage],
        output: OutputSpec,
        raw: str,
        schema: type[T],
        params: dict[str, Any],
        grow_budget: bool = True,
    ) -> tuple[T, Usage]:
        """The parsed answer and what repairing it used (nothing when it parsed first time)."""
        try:
            return parse_output(raw, schema), Usage()
        except ParseFailure as first:
            problem = str(first)
        repaired = await self._call_until_complete(
            repair_messages(prompt, raw, problem), output, 1, params, grow_budget
        )
        try:
            return parse_output(repaired.text, schema), repaired.usage
        except ParseFailure as second:
            raise OutputParseError(
                f"the model's answer did not fit {schema.__name__} even after one repair: {second}",
                raw=raw if not repaired.text else repaired.text,
            ) from None

    # -- one call through shared calls, cache, budget, retry and limits --------------------
    async def _call(
        self, request: ModelRequest, *, accept_truncated: bool = False
    ) -> ModelResponse:
        request = for_current_asking(request)  # a repeated cell's asking is its own request
        key = request_key(self.identity(), request)
        response, shared = await self.endpoint.calls.run(
            key, lambda: self._call_once(key, request, accept_truncated)
        )
        if shared:
            self._charge(Usage(cached_requests=1), priced=True)
            return response.model_copy(update={"cached": True, "usage": Usage(cached_requests=1)})
        return response

    async def _call_once(
        self, key: str, request: ModelRequest, accept_truncated: bool
    ) -> ModelResponse:
        answers = run_answers()
        given = answers.get(key) if answers is not None else None
        if given is not None:
            self._charge(Usage(cached_requests=1), priced=True)
            return given.model_copy(update={"cached": True, "usage": Usage(cached_requests=1)})
        if self.cache is not None:
            hit = self.cache.get_response(key)
            # A cut-off answer comes back marked as such (finish_reason "length"): the caller's
            # completeness check asks again with a bigger budget, which is another key.
            if hit is not None:
                self._charge(Usage(cached_requests=1), priced=True)
                return hit.model_copy(update={"cached": True, "usage": Usage(cached_requests=1)})
        budget = current_budget()
        if budget is not None:
            budget.check()
        response = await call_with_retry(lambda: self._limited_call(request), self.retry)
        cost = (
            self.price.cost(response.usage.input_tokens, response.usage.output_tokens)
            if self.price
            else 0.0
        )
        usage = response.usage.model_copy(update={"cost": cost})
        self._charge(usage, priced=self.price is not None)
        if budget is not None:
            budget.charge(cost)
        # A cut-off answer is kept as what it is: the model's answer to exactly this request. No
        # caller takes it for a complete one (see `_call_until_complete`), and a rerun that
        # needs the bigger budget again finds both answers without asking.
        if self.cache is not None:
            self.cache.put_response(key, self.model, response)
        if answers is not None:
            answers[key] = response
        return response.model_copy(update={"usage": usage})

    async def _limited_call(self, request: ModelRequest) -> ModelResponse:
        estimate = sum(len(str(m.content)) for m in request.messages) // 4 + int(
            request.params.get("max_tokens") or 512
        )
        held = await self.limiter.acquire(estimate)
        rate_limited = False
        started = time.monotonic()
        latency: float | None = None
        try:
            # Asked again now that the slot is ours: while this call waited for it, the budget may
            # have run out, or the run been told to stop (a Ctrl-C lets only calls already sent
            # finish); either way this call is not sent.
            budget = current_budget()
            if budget is not None:
                budget.check()
            response = await self._attempt(request)
            latency = time.monotonic() - started
            return response
        except RateLimited:
            rate_limited = True
            raise
        finally:
            self.limiter.release(rate_limited=rate_limited, latency=latency, held=held)

    def consecutive(self) -> AbstractAsyncContextManager[None]:
        """A block whose calls run one after another on one slot of the endpoint, e.g. a verdict
        call per statement over the same source: a llama.cpp server then keeps their shared
        prefix in that slot instead of reading it again after other rows' calls. A limiter that
        cannot hold a slot (a Ray worker's leased one) leaves the calls as they are."""
        hold = getattr(self.limiter, "hold", None)
        return hold() if hold is not None else nullcontext()

    async def _attempt(self, request: ModelRequest) -> ModelResponse:
        if self.attempt_timeout is None:
            return await self.provider.complete(request)
        try:
            with anyio.fail_after(self.attempt_timeout):
                return await self.provider.complete(request)
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete answer within {self.attempt_timeout:g} s") from exc

    def _charge(self, usage: Usage, *, priced: bool) -> None:
        self.usage.add(usage, priced=priced)
        meter = current_meter()
        if meter is not None:
            meter.add(usage, priced=priced)

    async def aclose(self) -> None:
        await self.provider.aclose()


def _with_system_prompt(chat: list[ChatMessage], system_prompt: str) -> list[ChatMessage]:
    """The LLM's system prompt first: merged into a leading system message (one system message
    suits every chat template and Anthropic), else as a new one."""
    if chat and chat[0].role == "system" and isinstance(chat[0].content, str):
        return [
            ChatMessage(role="system", content=f"{system_prompt}\n\n{chat[0].content}"),
            *chat[1:],
        ]
    return [ChatMessage(role="system", content=system_prompt), *chat]


def _truncated(response: ModelResponse) -> bool:
    return any(generation.finish_reason == "length" for generation in response.generations)


__all__ = ["LLM"]
