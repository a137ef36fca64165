"""One monitored call on the application's side: opening its span, and its stream.

A call's span is opened before the request and closed when the answer is back; a stream's span
stays open (the trace waits for it) until the stream ends, fails, is closed or is freed. The SDK's
own stream object is kept (same type, same attributes): only its iterator and `close` are
replaced. Whatever goes wrong here is logged once and never reaches the application.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from assay.platform.sdk.llm_shapes import Adapter, LLMCall, _warn_once
from assay.platform.sdk.tracing import TraceBuilder, close_span, open_span, recording

_finish_lock = threading.Lock()


def _copy_request(kwargs: dict[str, Any]) -> dict[str, Any]:
    # a chat loop appends to its `messages` after the call: keep the list as it was sent
    return {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def begin_call(
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


def end_call(state: Any, *, result: Any = None, error: BaseException | None = None) -> None:
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
            call.record_chunk(chunk)
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
            call.record_chunk(chunk)
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

    @property  # type: ignore[misc]  # a property over __class__: isinstance sees the stream's
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
        self._call.record_chunk(chunk)
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
        self._call.record_chunk(chunk)
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


def traced_stream(stream: Any, state: Any, *, is_async: bool) -> Any:
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


class _StreamManager:
    """Anthropic's `messages.stream(...)` context manager: the call is recorded from entering to
    leaving it, with the message as accumulated by then (the SDK's own snapshot)."""

    def __init__(self, manager: Any, adapter: Adapter, kwargs: dict, options: dict) -> None:
        self._manager, self._adapter, self._kwargs, self._options = (
            manager,
            adapter,
            kwargs,
            options,
        )
        self._state: Any = None
        self._stream: Any = None
        self._finish: Callable[..., None] | None = None

    @property  # type: ignore[misc]  # a property over __class__: isinstance sees the stream's
    def __class__(self) -> type:
        return type(self._manager)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)

    def _entered(self, stream: Any) -> Any:
        self._stream = stream
        if self._state is not None:
            call, trace, span, opened, tokens = self._state
            trace.open_streams += 1
            close_span(trace, span, opened, tokens, finished=False)
            self._finish = _finisher(call, trace, span)
        return stream

    def _left(self, error: BaseException | None) -> None:
        if self._state is None or self._finish is None:
            return
        try:
            snapshot = self._stream.current_message_snapshot
        except Exception:  # nothing arrived yet
            snapshot = None
        call = self._state[0]
        call.result, call.error = snapshot, error
        self._finish()

    def __enter__(self) -> Any:
        self._state = begin_call(self._adapter, None, (), self._kwargs, self._options)
        try:
            stream = self._manager.__enter__()
        except BaseException as exc:
            end_call(self._state, error=exc)
            self._state = None
            raise
        return self._entered(stream)

    def __exit__(self, *exc: Any) -> Any:
        try:
            self._left(exc[1])
        finally:
            return self._manager.__exit__(*exc)  # noqa: B012 - the SDK decides what is raised

    async def __aenter__(self) -> Any:
        self._state = begin_call(self._adapter, None, (), self._kwargs, self._options)
        try:
            stream = await self._manager.__aenter__()
        except BaseException as exc:
            end_call(self._state, error=exc)
            self._state = None
            raise
        return self._entered(stream)

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            self._left(exc[1])
        finally:
            return await self._manager.__aexit__(*exc)  # noqa: B012


def monitored_manager(method: Callable[..., Any], adapter: Adapter, options: dict) -> Any:
    @functools.wraps(method)
    def monitored_stream(*args: Any, **kwargs: Any) -> Any:
        return _StreamManager(method(*args, **kwargs), adapter, kwargs, options)

    return monitored_stream


__all__ = ["begin_call", "end_call", "monitored_manager", "traced_stream"]
