"""Spans and traces: `@trace_function_call`, and the trace every monitored LLM call belongs to.

How calls group into traces (context variables, so threads and asyncio tasks each have their own):

- The outermost traced call opens a trace; traced functions and LLM calls made inside it are its
  spans, nested as they were called (`parent_id`). It is sent when that outermost call returns
  (and any stream it started has ended).
- A monitored LLM call made outside any traced function is a trace of its own.
- A traced function that finished without any LLM call inside it is queued for export but held
  back `JOIN_SECONDS`: a trace opened meanwhile by the same thread or asyncio task takes it in,
  so `docs = retrieve(q)` then `client.chat.completions.create(...)` make ONE trace. Otherwise
  (or on `flush()`) it is sent as a trace of its own; nothing waits in the application.
- Retrieval: the result of a traced function of kind "retrieval" (or, by default, one returning a
  non-empty list of strings or documents) becomes the `contexts` of the next LLM call of the same
  trace, and the trace's contexts are those of its last LLM call.

Only references are kept on the application's side (plus a shallow copy of the request); turning
them into JSON, the callback and everything else happens in the export thread.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import inspect
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal, TypeVar, overload

from assay.platform.sdk.client import current
from assay.platform.sdk.export import exporter
from assay.platform.sdk.trace_body import build_trace

F = TypeVar("F", bound=Callable[..., Any])
JOIN_SECONDS = 5.0


def _uuid4() -> str:
    """A random (version 4) UUID string, without `uuid.UUID`'s cost on the caller's thread."""
    raw = bytearray(os.urandom(16))
    raw[6], raw[8] = (raw[6] & 0x0F) | 0x40, (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def recording() -> bool:
    """False after `login(off=True)`: nothing is recorded at all."""
    return not current().off


class Span:
    __slots__ = (
        "attributes",
        "ended",
        "error",
        "id",
        "input",
        "kind",
        "llm",
        "name",
        "output",
        "parent_id",
        "started",
    )

    def __init__(self, name: str, kind: str, parent_id: str | None, input: Any = None) -> None:
        self.id = os.urandom(8).hex()  # as OpenTelemetry's span ids
        self.parent_id = parent_id
        self.name, self.kind, self.input = name, kind, input
        self.started = time.time()
        self.ended: float | None = None
        self.output: Any = None
        self.error: BaseException | str | None = None
        self.attributes: dict[str, Any] = {}
        self.llm: Any = None  # an LLMCall for kind "llm"


class TraceBuilder:
    """One trace being recorded; sent once its opening call and its open streams are done."""

    def __init__(self) -> None:
        self.id = _uuid4()
        self.session_id = _session.get()  # `trace_session(...)` around the opening call
        self.created = time.time()
        self.spans: list[Span] = []
        self.root: Span | None = None
        self.fresh_contexts: list[str] = []
        self.open_streams = 0
        self.root_done = False
        self.sent = False
        self.claimed: str | None = None  # "adopted" into another trace, or "sent" on its own

    def claim(self, by: str) -> bool:
        with _claim_lock:
            if self.claimed is None:
                self.claimed = by
            return self.claimed == by

    def take_contexts(self) -> list[str]:
        contexts, self.fresh_contexts = self.fresh_contexts, []
        return contexts

    def closed_one(self) -> None:
        with _claim_lock:
            if not self.root_done or self.open_streams > 0 or self.sent:
                return
            self.sent = True
        exporter().submit(build_trace, self)

    def has_llm(self) -> bool:
        return any(span.llm is not None for span in self.spans)


_trace: contextvars.ContextVar[TraceBuilder | None] = contextvars.ContextVar(
    "assay_trace", default=None
)
_parent: contextvars.ContextVar[str | None] = contextvars.ContextVar("assay_span", default=None)
_pending: contextvars.ContextVar[tuple[int, collections.deque[TraceBuilder]] | None] = (
    contextvars.ContextVar("assay_pending", default=None)
)
_claim_lock = threading.Lock()
_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("assay_session", default=None)


@contextlib.contextmanager
def trace_session(session_id: str) -> Iterator[None]:
    """Every trace opened inside the block (a traced function's, a monitored call's) belongs to
    the session `session_id`: it is sent with `metadata.session_id`, unless the call's own
    `monitor(metadata=...)` names one. The server groups a session's traces into a conversation.
    Context variables carry it, so each thread or asyncio task has its own."""
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError(
            f"trace_session: session_id must be a non-empty string, got {session_id!r}"
        )
    token = _session.set(session_id.strip())
    try:
        yield
    finally:
        _session.reset(token)


def _owner() -> int:
    """The running asyncio task, else the thread: tasks copy their parent's context variables,
    and a function traced in one request must not join another request's trace."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return id(task) if task is not None else threading.get_ident()


@overload
def _pending_here(create: Literal[True]) -> collections.deque[TraceBuilder]: ...
@overload
def _pending_here(create: bool) -> collections.deque[TraceBuilder] | None: ...
def _pending_here(create: bool) -> collections.deque[TraceBuilder] | None:
    held = _pending.get()
    owner = _owner()
    if held is not None and held[0] == owner:
        return held[1]
    if not create:
        return None
    waiting: collections.deque[TraceBuilder] = collections.deque()
    _pending.set((owner, waiting))
    return waiting


def _build_unclaimed(trace: TraceBuilder) -> dict[str, Any] | None:
    """A held function-only trace, unless a later trace took it in."""
    return build_trace(trace) if trace.claim("sent") else None


def open_span(name: str, kind: str, input: Any = None) -> tuple[TraceBuilder, Span, bool, Any]:
    """Start a span in the current trace (opening one if there is none)."""
    trace = _trace.get()
    opened = trace is None
    if trace is None:
        trace = TraceBuilder()
        pending = _pending_here(create=False)
        if pending:
            for waiting in pending:  # what was traced just before joins this trace
                if waiting.session_id != trace.session_id:
                    continue  # never across sessions: it is sent on its own
                if waiting.claim("adopted"):
                    trace.spans.extend(waiting.spans)
                    trace.fresh_contexts.extend(waiting.fresh_contexts)
            pending.clear()
    span = Span(name, kind, _parent.get(), input)
    trace.spans.append(span)
    if opened:
        trace.root = span
    tokens = (_trace.set(trace), _parent.set(span.id))
    return trace, span, opened, tokens


def close_span(
    trace: TraceBuilder, span: Span, opened: bool, tokens: Any, *, finished: bool = True
) -> None:
    """Leave the span (the context is restored); `finished=False` for a stream still running."""
    _trace.reset(tokens[0])
    _parent.reset(tokens[1])
    if finished and span.ended is None:
        span.ended = time.time()
    if not opened:
        return
    trace.root_done = True
    if span.llm is None and not trace.has_llm():
        pending = _pending_here(create=True)
        while pending and pending[0].claimed is not None:
            pending.popleft()  # already sent on their own
        pending.append(trace)
        exporter().submit(_build_unclaimed, trace, hold=JOIN_SECONDS)
        return
    trace.closed_one()


# -- @trace_function_call ----------------------------------------------------------------------
def _documents(value: Any, *, force: bool) -> list[str] | None:
    """A retrieval result as a list of strings (None when it does not look like one)."""
    if isinstance(value, str):
        return [value] if force else None
    if not isinstance(value, (list, tuple)) or not value:
        return [] if force and value is not None else None
    texts = []
    for item in value:
        if isinstance(item, str):
            texts.append(item)
            continue
        text = None
        for attribute in ("page_content", "text", "content"):  # LangChain, LlamaIndex, plain docs
            text = item.get(attribute) if isinstance(item, dict) else getattr(item, attribute, None)
            if isinstance(text, str):
                break
        if not isinstance(text, str):
            if not force:
                return None
            text = str(item)
        texts.append(text)
    return texts


def _finish_function(trace: TraceBuilder, span: Span, result: Any, kind: str | None) -> None:
    span.output = result
    if kind != "function":
        contexts = _documents(result, force=kind == "retrieval")
        if contexts is not None:
            span.kind = "retrieval"
            trace.fresh_contexts.extend(contexts)


def trace_function_call(
    func: F | None = None, *, name: str | None = None, kind: str | None = None
) -> Any:
    """Record a function's arguments, result, duration and exception as a span (sync or async).

    `kind="retrieval"` makes the result the contexts of the next LLM call; `kind="function"`
    never does; by default a non-empty list of strings or documents counts as retrieved contexts.
    The function's own behaviour is untouched: same result, same exception.
    """
    if kind not in (None, "retrieval", "function", "other"):
        raise ValueError(
            f"trace_function_call: kind must be 'retrieval', 'function' or 'other', got {kind!r}"
        )
    if func is None:
        return functools.partial(trace_function_call, name=name, kind=kind)
    span_name = name or getattr(func, "__qualname__", None) or repr(func)
    try:
        signature: inspect.Signature | None = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None

    def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if signature is None:
            return {"args": list(args), "kwargs": kwargs}
        try:
            return dict(signature.bind_partial(*args, **kwargs).arguments)
        except TypeError:
            return {"args": list(args), "kwargs": kwargs}

    span_kind = "retrieval" if kind == "retrieval" else "function"

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_traced(*args: Any, **kwargs: Any) -> Any:
            if not recording():
                return await func(*args, **kwargs)
            trace, span, opened, tokens = open_span(span_name, span_kind, arguments(args, kwargs))
            try:
                result = await func(*args, **kwargs)
            except BaseException as exc:
                span.error = exc
                raise
            else:
                _finish_function(trace, span, result, kind)
                return result
            finally:
                close_span(trace, span, opened, tokens)

        return async_traced

    @functools.wraps(func)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if not recording():
            return func(*args, **kwargs)
        trace, span, opened, tokens = open_span(span_name, span_kind, arguments(args, kwargs))
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            span.error = exc
            raise
        else:
            _finish_function(trace, span, result, kind)
            return result
        finally:
            close_span(trace, span, opened, tokens)

    return traced


__all__ = [
    "Span",
    "TraceBuilder",
    "close_span",
    "open_span",
    "recording",
    "trace_function_call",
    "trace_session",
]
