"""Any OpenAI-compatible endpoint through the official `openai` client: OpenAI, Azure OpenAI,
vLLM, Ollama, llama.cpp server, LM Studio, OpenRouter, and assay's embedded local judge."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import weakref
from typing import Any

import anyio

from assay._util.loop_local import LoopLocal
from assay._util.sync import on_temporary_loop
from assay.errors import MalformedResponse, ModelConnectionError, ModelTimeout
from assay.models.providers.base import Profile, Provider
from assay.models.providers.openai_http import (
    OpenAIHttp,
    aiohttp_cause,
    resolve_base_url,
    retry_after_seconds,
    status_error,
)
from assay.models.providers.openai_wire import (
    decode_completion,
    json_form,
    post_completion,
    read_completion,
    read_embeddings,
    wire_body,
)
from assay.models.types import ModelRequest, ModelResponse, Usage

# Our parameter names -> the chat.completions argument carrying them.
_SAMPLING = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "logprobs",
    "top_logprobs",
    "presence_penalty",
    "frequency_penalty",
)


# Raised by the SDK (or below it) while it decodes a 200 answer's body.
_UNREADABLE = (json.JSONDecodeError, UnicodeDecodeError)


def translate_openai_error(exc: Exception) -> Exception:
    """Map an `openai` SDK exception to the matching assay ModelError. Anything that went wrong
    on the wire or while decoding the answer is a transient ModelError, never a stray exception."""
    import openai
    import pydantic

    if isinstance(exc, _UNREADABLE):
        return MalformedResponse(
            f"the provider's answer could not be read ({type(exc).__name__}: {exc})"
        )
    if isinstance(exc, (openai.APIResponseValidationError, pydantic.ValidationError)):
        return MalformedResponse(
            f"the provider's answer does not have the shape of a completion: {exc}"
        )
    wire = aiohttp_cause(exc)
    if wire is not None:
        return wire
    if _from_http_stack(exc):
        if "timeout" in type(exc).__name__.lower():
            return ModelTimeout(f"the request timed out: {type(exc).__name__}: {exc}")
        return ModelConnectionError(f"the connection failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeout(f"the request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return ModelConnectionError(f"could not reach the provider: {exc}")
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code, _body_text(exc), exc.response.headers)
    return exc


def _from_http_stack(exc: Exception) -> bool:
    """An error of the HTTP libraries under the SDK (httpx, httpcore, h11, and their forks) that
    escaped it, e.g. a connection cut while the body was being read."""
    module = type(exc).__module__.split(".", 1)[0]
    return module.startswith(("httpx", "httpcore", "h11", "h2"))


def _body_text(exc: Any) -> str:
    try:
        return str(exc.response.text)
    except Exception:
        return str(exc)


class OpenAICompatible(Provider):
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        profile: Profile | None = None,
        name: str | None = None,
        default_headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(model, profile=profile or Profile(logprobs=True))
        if name:
            self.name = name
        self.timeout = timeout
        if client is not None:
            # An async client binds its connection pool to the loop that first used it: used on
            # a second loop (a second `asyncio.run`, one of assay's sync wrappers' short-lived
            # loops) it fails with "Event loop is closed", and the first loop's connections are
            # never closed. So a copy with a pool of its own is used on each loop and closed when
            # that loop ends (`LoopLocal`), leaving the caller's pool untouched: on every loop when
            # the client has the SDK's own pool; when the caller gave it an `http_client` (whose
            # transport settings cannot be copied), only on assay's temporary loops and on the
            # caller's later loops once the loop it was first used on has closed.
            self.base_url = str(getattr(client, "base_url", base_url) or "")
            # The SDK wraps `create` in plain functions, so ask the client's class instead.
            self._is_async = _is_async_client(client)
            self._clients = None
            self._given = client
            self._copies = LoopLocal(lambda: _pool_of_its_own(client)) if self._is_async else None
            self._copy_everywhere = self._is_async and _has_the_sdks_own_pool(client)
            self._given_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
            self.api_key = getattr(client, "api_key", None)
            return
        self.api_key = api_key  # None: OPENAI_API_KEY, as the SDK reads it
        self.base_url = resolve_base_url(base_url)
        # assay's own client (`openai_http.py`): the SDK's request machinery was about 40% of
        # the loop's CPU per judge call. Retries are assay's job (one policy for every provider).
        self._clients = LoopLocal(
            lambda: OpenAIHttp(
                base_url=self.base_url,
                api_key=api_key,
                timeout=timeout,
                default_headers=default_headers,
            )
        )
        self._given = None
        self._copies = None
        self._copy_everywhere = False
        self._given_loop = None
        self._is_async = True

    @property
    def client(self) -> Any:
        """The client for the running event loop."""
        if self._clients is not None:
            return self._clients.get()
        if self._copies is not None and (
            self._copy_everywhere or on_temporary_loop() or self._given_loop_closed()
        ):
            return self._copies.get()
        return self._given

    def _given_loop_closed(self) -> bool:
        """True when the caller's client (with an `http_client` of its own) was used on one of the
        caller's loops that has since closed, e.g. the first of two `asyncio.run(aevaluate(...))`:
        its kept-alive connections belong to that dead loop, and reusing them fails with "Event loop
        is closed". Then, as on assay's temporary loops, a copy with a pool of its own serves each later
        loop. The first caller's loop it is used on is remembered as the one it is bound to."""
        loop = asyncio.get_running_loop()
        if self._given_loop is None:
            self._given_loop = weakref.ref(loop)
            return False
        bound = self._given_loop()
        if bound is loop:
            return False
        # A loop since collected has closed too. A second live loop (another thread's) is left
        # to the caller: their pool is not ours to move while its loop runs.
        return bound is None or bound.is_closed()

    def endpoint_address(self) -> dict[str, Any]:
        from assay.models.endpoint import credential_fingerprint

        key = self.api_key if self.api_key is not None else os.environ.get("OPENAI_API_KEY")
        return {
            **self.identity(),
            "credentials": credential_fingerprint(key if isinstance(key, str) else None),
        }

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "base_url": self.base_url}

    def _arguments(self, request: ModelRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [message.wire() for message in request.messages],
        }
        if request.n != 1:
            arguments["n"] = request.n
        extra = {}
        for key, value in request.params.items():
            if key in _SAMPLING:
                arguments[key] = value
            else:
                extra[key] = value  # provider-specific knobs (e.g. vLLM's guided decoding)
        if extra:
            arguments["extra_body"] = extra
        output = request.output
        if output is not None:
            if output.mode == "json_schema":
                arguments["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": output.name, "schema": output.schema},
                }
            elif output.mode == "tool":
                arguments["tools"] = [
                    {
                        "type": "function",
                        "function": {"name": output.name, "parameters": output.schema},
                    }
                ]
                arguments["tool_choice"] = {"type": "function", "function": {"name": output.name}}
            elif output.mode == "json_object":
                arguments["response_format"] = {"type": "json_object"}
        return arguments

    async def _sdk_call(self, call: Any) -> Any:
        """Run one SDK call (async client, or sync client on a worker thread) with its errors
        translated into assay's."""
        try:
            if self._is_async:
                return await call()
            raw = await anyio.to_thread.run_sync(call)
            return (
                await raw if inspect.isawaitable(raw) else raw
            )  # an async client we did not recognise
        except Exception as exc:
            translated = translate_openai_error(exc)
            if translated is exc:
                raise
            raise translated from exc

    async def complete(self, request: ModelRequest) -> ModelResponse:
        arguments = self._arguments(request)
        client = self.client
        if isinstance(client, OpenAIHttp):
            raw = decode_completion(await client.post("chat/completions", wire_body(arguments)))
        elif _is_sdk_client(client):
            data = await self._sdk_call(lambda: post_completion(client, arguments))
            raw = decode_completion(data)
        else:
            raw = await self._sdk_call(lambda: client.chat.completions.create(**arguments))
        return self._response(raw, request)

    def _response(self, raw: Any, request: ModelRequest) -> ModelResponse:
        try:
            return self._read_response(raw, request)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            # a body that parsed but is no completion
            raise MalformedResponse(
                f"the provider's answer does not have the shape of a completion: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _read_response(self, raw: Any, request: ModelRequest) -> ModelResponse:
        tool_call = request.output is not None and request.output.mode == "tool"
        generations, input_tokens, output_tokens, model = read_completion(
            json_form(raw), tool_call=tool_call
        )
        return ModelResponse(
            generations=generations,
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens, requests=1),
            model=model or self.model,
        )

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        client = self.client
        if isinstance(client, OpenAIHttp):
            body = {"model": self.model, "input": texts, "encoding_format": "float"}
            raw = decode_completion(await client.post("embeddings", body))
        else:
            raw = await self._sdk_call(
                lambda: client.embeddings.create(model=self.model, input=texts)
            )
        try:
            return read_embeddings(json_form(raw))
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise MalformedResponse(
                f"the provider's answer does not have the shape of embeddings: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    async def aclose(self) -> None:
        """Close the client this provider made for the running loop (the caller's own is theirs)."""
        for holder in (self._clients, self._copies):
            made = holder.pop_current() if holder is not None else None
            if made is not None and made is not self._given:
                await made.close()


def _is_sdk_client(client: Any) -> bool:
    import openai

    return isinstance(client, (openai.AsyncOpenAI, openai.OpenAI))


def _pool_of_its_own(client: Any) -> Any:
    """A copy of a caller's async client (same key, URL, headers, timeout, retries) with a new
    connection pool, for one of assay's temporary loops."""
    copy = getattr(client, "copy", None)
    if copy is None:
        return client  # not an openai client: nothing we can safely copy
    import openai

    return copy(http_client=openai.DefaultAsyncHttpxClient())


def _has_the_sdks_own_pool(client: Any) -> bool:
    """An `openai.AsyncOpenAI` built without an `http_client` (its pool is the SDK's default one,
    so a copy with a new default pool is the same client in every respect but its loop)."""
    try:
        from openai._base_client import AsyncHttpxClientWrapper
    except ImportError:  # pragma: no cover - a future SDK without it: keep the caller's client
        return False
    return isinstance(getattr(client, "_client", None), AsyncHttpxClientWrapper)


def _is_async_client(client: Any) -> bool:
    try:
        import openai

        if isinstance(client, openai.AsyncOpenAI):
            return True
        if isinstance(client, openai.OpenAI):
            return False
    except ImportError:  # pragma: no cover - openai is a core dependency
        pass
    return (
        inspect.iscoroutinefunction(client.chat.completions.create)
        or "async" in type(client).__name__.lower()
    )


__all__ = ["OpenAICompatible", "retry_after_seconds", "translate_openai_error"]
