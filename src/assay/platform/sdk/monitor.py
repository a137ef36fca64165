"""`monitor(client)`: the same client, with each LLM call recorded as a trace (or a span of one).

Supported: `openai.OpenAI` / `AsyncOpenAI` (and the Azure variants: `chat.completions.create`,
`responses.create`), `anthropic.Anthropic` / `AsyncAnthropic` (`messages.create`, and the
`messages.stream(...)` context manager), and LiteLLM
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
from collections.abc import Callable
from types import ModuleType
from typing import Any

from assay.platform.sdk.llm_shapes import ANTHROPIC, CHAT, RESPONSES, Adapter
from assay.platform.sdk.recording import begin_call, end_call, monitored_manager, traced_stream


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
            state = begin_call(adapter, signature, args, kwargs, options)
            try:
                result = await method(*args, **kwargs)
            except BaseException as exc:
                end_call(state, error=exc)
                raise
            if state is not None and kwargs.get("stream") is True:
                return traced_stream(result, state, is_async=True)
            end_call(state, result=result)
            return result

        return monitored_async

    @functools.wraps(method)
    def monitored(*args: Any, **kwargs: Any) -> Any:
        state = begin_call(adapter, signature, args, kwargs, options)
        try:
            result = method(*args, **kwargs)
        except BaseException as exc:
            end_call(state, error=exc)
            raise
        if state is not None and kwargs.get("stream") is True:
            return traced_stream(result, state, is_async=False)
        end_call(state, result=result)
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

    @property  # type: ignore[misc]  # a property over __class__: isinstance sees the client's
    def __class__(self) -> type:  # isinstance(monitor(client), OpenAI) holds
        return type(self._target)

    def __getattr__(self, name: str) -> Any:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        value = getattr(self._target, name)
        path = (*self._prefix, name)
        adapter = self._methods.get(path)
        if adapter is not None and callable(value) and path == ("messages", "stream"):
            wrapped: Any = monitored_manager(value, adapter, self._options)
        elif adapter is not None and callable(value):
            wrapped = _monitored_call(value, adapter, self._options)
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
        return {("messages", "create"): ANTHROPIC, ("messages", "stream"): ANTHROPIC}
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
