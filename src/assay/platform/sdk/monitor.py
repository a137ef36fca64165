"""`monitor(client)`: the same client, with each LLM call recorded as a trace (or a span of one).

Supported: `openai.OpenAI` / `AsyncOpenAI` (and the Azure variants: `chat.completions.create`,
`responses.create`), `anthropic.Anthropic` / `AsyncAnthropic` (`messages.create`), and LiteLLM
(`monitor(litellm)` for its `completion` / `acompletion`, or `monitor(litellm.completion)`).
`stream=True` included: chunks reach the caller as they arrive and the trace is recorded when the
stream ends, fails or is closed.

The returned object forwards every attribute to the client (`isinstance` holds too), returns
exactly what the client returns (a stream is the SDK's own stream object) and lets every exception
through unchanged. Nothing about the trace runs before the call but taking a shallow copy of the
request; processing the answer, the callback and sending happen in the export thread.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

from assay.platform.sdk.llm_shapes import ANTHROPIC, CHAT, RESPONSES, Adapter, LLMCall, _warn_once
from assay.platform.sdk.tracing import TraceBuilder, close_span, open_span, recording

_finish_lock = threading.Lock()


def _copy_request(kwargs: dict[str, Any]) -> dict[str, Any]:
    # a chat loop appends to its `messages` after the call: keep the list as it was sent
    return {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def _begin(
    adapter: Adapter, signature: inspect.Signature | None, args: tuple, kwargs: dict, options: dict
) -> Any:
    try:
        if not recording():
            return None
        request = kwargs
        if args and signature is not None:
            request = {**signature.bind_partial(*args, **kwargs).arguments}
            request.update(request.pop("kwargs", None) or {})
        call = LLMCall(adapter, _copy_request(request), options)
        trace, span, opened, tokens = open_span(adapter.name, "llm")
        span.llm = call
        call.contexts = trace.take_contexts()
        return call, trace, span, opened, tokens
    except Exception as exc:  # recording must never stop the call
        _warn_once("begin", f"a call could not be recorded ({exc!r})")
        return None


def _end(state: Any, *, result: Any = None, error: BaseException | None = None) -> None:
    if state is None:
        return
    call, trace, span, opened, tokens = state
    try:
        call.result, call.error = result, error
        close_span(trace, span, opened, tokens)
    except Exception as exc:
        _warn_once("end", f"a call could not be recorded ({exc!r})")


def _finisher(call: LLMCall, trace: TraceBuilder, span: Any) -> Callable[..., None]:
    def finish(closed_early: bool = False) -> None:
        with _finish_lock:
            if call.finished:
                return
            call.finished = True
            span.ended = time.time()
            if closed_early:
                span.attributes["stream_closed_early"] = True
            trace.open_streams -= 1
        trace.closed_one()

    return finish


def _traced_chunks(inner: Any, call: LLMCall, finish: Callable[..., None]) -> Any:
    early = False
    try:
        for chunk in inner:
            call.chunks.append(chunk)
            yield chunk
    except GeneratorExit:
        early = True
        raise
    except BaseException as exc:
        call.error = exc
        raise
    finally:
        finish(early)


async def _traced_chunks_async(inner: Any, call: LLMCall, finish: Callable[..., None]) -> Any:
    early = False
    try:
        async for chunk in inner:
            call.chunks.append(chunk)
            yield chunk
    except GeneratorExit:
        early = True
        raise
    except BaseException as exc:
        call.error = exc
        raise
    finally:
        finish(early)


class _StreamProxy:
    """For a stream type without the SDKs' `_iterator` (LiteLLM's): forwards, records chunks."""

    def __init__(self, stream: Any, call: LLMCall, finish: Callable[..., None]) -> None:
        self._stream, self._call, self._finish = stream, call, finish

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(proxy, TheStreamType) holds
        return type(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __iter__(self) -> _StreamProxy:
        return self

    def __next__(self) -> Any:
        try:
            chunk = next(self._stream)
        except StopIteration:
            self._finish()
            raise
        except BaseException as exc:
            self._call.error = exc
            self._finish()
            raise
        self._call.chunks.append(chunk)
        return chunk

    def __aiter__(self) -> _StreamProxy:
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._stream.__anext__()
        except StopAsyncIteration:
            self._finish()
            raise
        except BaseException as exc:
            self._call.error = exc
            self._finish()
            raise
        self._call.chunks.append(chunk)
        return chunk

    def __enter__(self) -> _StreamProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._finish(True)
        close = getattr(self._stream, "close", None)
        if callable(close):
            close()

    def __del__(self) -> None:
        self._finish(True)


def _traced_stream(stream: Any, state: Any, *, is_async: bool) -> Any:
    try:
        return _wrap_stream(stream, state, is_async=is_async)
    except Exception as exc:  # recording must never cost the application its stream
        _warn_once("stream", f"a stream could not be recorded ({exc!r})")
        return stream


def _wrap_stream(stream: Any, state: Any, *, is_async: bool) -> Any:
    call, trace, span, opened, tokens = state
    call.chunks = []
    trace.open_streams += 1
    close_span(trace, span, opened, tokens, finished=False)
    finish = _finisher(call, trace, span)
    inner = getattr(stream, "_iterator", None)  # the OpenAI and Anthropic SDKs' own generator
    if inner is None or not hasattr(type(stream), "close"):
        return _StreamProxy(stream, call, finish)
    # Keep the SDK's own stream object (same type, same attributes): only its iterator and its
    # close are replaced. No reference from them back to the stream, so a dropped stream is
    # still freed (and recorded) at once.
    cls_close, ref = type(stream).close, weakref.ref(stream)
    if is_async:
        chunks = _traced_chunks_async(inner, call, finish)

        async def aclose() -> None:
            target = ref()
            try:
                if target is not None:
                    await cls_close(target)
            finally:
                await chunks.aclose()
                finish(True)

        stream._iterator, stream.close = chunks, aclose
    else:
        chunks = _traced_chunks(inner, call, finish)

        def close() -> None:
            target = ref()
            try:
                if target is not None:
                    cls_close(target)
            finally:
                chunks.close()
                finish(True)

        stream._iterator, stream.close = chunks, close
    # a stream dropped before its first chunk: its generator never ran, so no `finally` will
    # (recorded when the stream is freed: at once, or by the cycle collector for OpenAI's)
    weakref.finalize(stream, finish, True)
    return stream


def _is_async(func: Any) -> bool:
    # the SDKs decorate their async methods with plain wrappers: look through `__wrapped__`
    try:
        return inspect.iscoroutinefunction(inspect.unwrap(func))
    except ValueError:  # a wrapper cycle
        return inspect.iscoroutinefunction(func)


def _monitored_call(method: Callable[..., Any], adapter: Adapter, options: dict[str, Any]) -> Any:
    try:
        signature: inspect.Signature | None = inspect.signature(method)
    except (TypeError, ValueError):
        signature = None

    if _is_async(method):

        @functools.wraps(method)
        async def monitored_async(*args: Any, **kwargs: Any) -> Any:
            state = _begin(adapter, signature, args, kwargs, options)
            try:
                result = await method(*args, **kwargs)
            except BaseException as exc:
                _end(state, error=exc)
                raise
            if state is not None and kwargs.get("stream") is True:
                return _traced_stream(result, state, is_async=True)
            _end(state, result=result)
            return result

        return monitored_async

    @functools.wraps(method)
    def monitored(*args: Any, **kwargs: Any) -> Any:
        state = _begin(adapter, signature, args, kwargs, options)
        try:
            result = method(*args, **kwargs)
        except BaseException as exc:
            _end(state, error=exc)
            raise
        if state is not None and kwargs.get("stream") is True:
            return _traced_stream(result, state, is_async=False)
        _end(state, result=result)
        return result

    return monitored


# -- the client proxy ----------------------------------------------------------------------------
Methods = dict[tuple[str, ...], Adapter]


class Monitored:
    """Forwards everything to the wrapped client; the LLM methods come back monitored."""

    __slots__ = ("__weakref__", "_cache", "_methods", "_options", "_prefix", "_target")

    def __init__(
        self, target: Any, methods: Methods, prefix: tuple[str, ...], options: dict
    ) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_methods", methods)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_cache", {})

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(monitor(client), OpenAI) holds
        return type(self._target)

    def __getattr__(self, name: str) -> Any:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        value = getattr(self._target, name)
        path = (*self._prefix, name)
        adapter = self._methods.get(path)
        if adapter is not None and callable(value):
            wrapped: Any = _monitored_call(value, adapter, self._options)
        elif any(method[: len(path)] == path for method in self._methods):
            wrapped = Monitored(value, self._methods, path, self._options)
        elif not self._prefix and name in ("with_options", "copy") and callable(value):
            methods, options = self._methods, self._options

            def rewrap(*args: Any, **kwargs: Any) -> Any:
                return Monitored(value(*args, **kwargs), methods, (), options)

            wrapped = rewrap
        else:
            return value
        self._cache[name] = wrapped
        return wrapped

    def __setattr__(self, name: str, value: Any) -> None:
        self._cache.pop(name, None)
        setattr(self._target, name, value)

    def __delattr__(self, name: str) -> None:
        self._cache.pop(name, None)
        delattr(self._target, name)

    def __dir__(self) -> list[str]:
        return dir(self._target)

    def __repr__(self) -> str:
        return repr(self._target)

    def __enter__(self) -> Monitored:
        self._target.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._target.__exit__(*exc)

    async def __aenter__(self) -> Monitored:
        await self._target.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._target.__aexit__(*exc)


def _methods_for(client: Any) -> Methods | None:
    if isinstance(client, ModuleType):
        if client.__name__ == "litellm":
            return {("completion",): CHAT, ("acompletion",): CHAT}
        return None
    package = type(client).__module__.split(".")[0]
    if package == "openai":
        return {("chat", "completions", "create"): CHAT, ("responses", "create"): RESPONSES}
    if package == "anthropic":
        return {("messages", "create"): ANTHROPIC}
    return None


def monitor(
    client: Any, metadata: dict[str, Any] | None = None, callback: Callable[..., Any] | None = None
) -> Any:
    """Wrap an LLM client so that each call is recorded as a trace.

    `client`: an OpenAI or Anthropic client (sync or async), the `litellm` module, or one of
    LiteLLM's `completion` / `acompletion` functions. `metadata` is stored with each trace.
    `callback(raw_input, raw_output)` (run in the export thread) may return
    `{"input": ..., "output": ...}` (or a 2-tuple) to store instead of the default processing;
    `raw_input` is the request's keyword arguments, `raw_output` the answer (for a stream, the
    answer reassembled from its chunks; None after an error).
    """
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"monitor: metadata must be a dict, got {type(metadata).__name__}")
    if callback is not None and not callable(callback):
        raise TypeError("monitor: callback must be callable")
    if isinstance(client, Monitored):
        client = object.__getattribute__(client, "_target")
    options = {"metadata": dict(metadata or {}), "callback": callback}
    methods = _methods_for(client)
    if methods is not None:
        return Monitored(client, methods, (), options)
    if callable(client) and getattr(client, "__module__", "").split(".")[0] == "litellm":
        return _monitored_call(client, CHAT, options)
    raise TypeError(
        f"monitor: unsupported client {type(client).__module__}.{type(client).__qualname__}; "
        "supported: openai.OpenAI / AsyncOpenAI, anthropic.Anthropic / AsyncAnthropic, the litellm "
        "module or litellm.completion / litellm.acompletion"
    )


__all__ = ["Monitored", "monitor"]
