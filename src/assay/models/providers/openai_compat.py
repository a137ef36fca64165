"""Any OpenAI-compatible endpoint through the official `openai` client: OpenAI, Azure OpenAI,
vLLM, Ollama, llama.cpp server, LM Studio, OpenRouter, and assay's embedded local judge.

A caller's own client is used as given (`chat.completions.create`). On the clients assay builds
itself, the client's CPU per call is kept small: the JSON body is sent as it is on the SDK
client's own HTTP client with the URL, headers and timeout the SDK would use (`_DirectRoute`),
and the answer is read from its JSON. The HTTP stack is httpx's, unchanged."""

from __future__ import annotations

import array
import base64
import binascii
import inspect
import json
import os
import weakref
from typing import Any

import anyio

from assay._util.loop_local import LoopLocal
from assay._util.sync import on_temporary_loop
from assay.errors import (
    MalformedResponse,
    ModelConnectionError,
    ModelTimeout,
    ProviderError,
    RateLimited,
)
from assay.models.providers.base import Profile, Provider
from assay.models.types import Generation, ModelRequest, ModelResponse, TokenLogprob, Usage

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


def retry_after_seconds(headers: Any) -> float | None:
    """Read `retry-after-ms` or `retry-after` (seconds) from response headers."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue  # an HTTP date; the exponential backoff handles it
    return None


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
    if _from_http_stack(exc):
        if "timeout" in type(exc).__name__.lower():
            return ModelTimeout(f"the request timed out: {type(exc).__name__}: {exc}")
        return ModelConnectionError(f"the connection failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeout(f"the request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return ModelConnectionError(f"could not reach the provider: {exc}")
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code, exc.response.headers, _body_text(exc))
    return exc


def status_error(status: int, headers: Any, body: str) -> ProviderError:
    """The ModelError for an HTTP error answer: RateLimited for 429 (and an overloaded 503)."""
    if status == 429 or (status == 503 and "overload" in body.lower()):
        return RateLimited(
            f"rate limited (HTTP {status}): {body[:300]}",
            retry_after=retry_after_seconds(headers),
            status=status,
            body=body,
        )
    return ProviderError(
        f"HTTP {status}: {body[:500]}",
        status=status,
        body=body,
        retry_after=retry_after_seconds(headers),
    )


def _from_http_stack(exc: Exception) -> bool:
    """An error of the HTTP libraries under the SDK (httpx, httpcore, h11, and their forks) that
    escaped it, e.g. a connection cut while the body was being read."""
    module = type(exc).__module__.split(".", 1)[0]
    return module.startswith(("httpx", "httpcore", "h11", "h2"))


def _body_text(exc: Any) -> str:
    try:
        return exc.response.text
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
            # A caller's own client is used as given on the caller's loops. On the short-lived loops
            # of assay's sync wrappers an async client would bind its connection pool to a loop
            # that is about to close (and fail on the next one with "Event loop is closed"), so
            # there a copy with its own pool is used and closed with the loop.
            self.base_url = str(getattr(client, "base_url", base_url) or "")
            # The SDK wraps `create` in plain functions, so ask the client's class instead.
            self._is_async = _is_async_client(client)
            self._clients = None
            self._routes = None
            self._given = client
            self._copies = LoopLocal(lambda: _pool_of_its_own(client)) if self._is_async else None
            self.api_key = getattr(client, "api_key", None)
            return
        import openai

        self.api_key = api_key  # None: the SDK reads OPENAI_API_KEY

        http_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

        def new_client() -> Any:
            # Retries are assay's job (one policy for every provider), so the SDK's are off.
            http = lean_http_client()
            client = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                timeout=timeout,
                max_retries=0,
                default_headers=default_headers,
                http_client=http,
            )
            if http is not None:
                http_clients[client] = http
            return client

        self._clients = LoopLocal(new_client)
        # How to send on this loop's client without the SDK's per-request machinery (False: no way).
        self._routes = LoopLocal(
            lambda: _DirectRoute.of(self.client, http_clients.get(self.client))
        )
        self._given = None
        self._copies = None
        self._is_async = True
        # As the SDK resolves it, without building a client just to ask.
        self.base_url = (
            base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        ).rstrip("/") + "/"

    @property
    def client(self) -> Any:
        """The client for the running event loop."""
        if self._clients is not None:
            return self._clients.get()
        if self._copies is not None and on_temporary_loop():
            return self._copies.get()
        return self._given

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
        """The keyword arguments of `chat.completions.create` (knobs the SDK does not name go in
        `extra_body`)."""
        arguments, extra = self._body_and_extra(request)
        if extra:
            arguments["extra_body"] = extra
        return arguments

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body `chat.completions.create` would send: its arguments with `extra_body`
        merged in (a key given in both is taken from `extra_body`, as the SDK does)."""
        body, extra = self._body_and_extra(request)
        if extra:
            body.update(extra)
        return body

    def _body_and_extra(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, Any]]:
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
        return arguments, extra

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

    def _route(self) -> _DirectRoute | None:
        """The direct route of assay's own client on this loop; None for a caller's client (sent
        through the SDK as given: it may be wrapped or instrumented) or an unusual configuration."""
        if self._routes is None:
            return None
        return self._routes.get() or None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        route = self._route()
        if route is not None:
            # The body is already plain JSON: posted as it is, the answer read from the decoded
            # JSON. `chat.completions.create` would walk the whole body against its TypedDicts,
            # build option and request objects, and build pydantic objects of the answer (every
            # token's top log-probs included): most of the client's CPU time per request.
            body = self._body(request)
            raw = await self._sdk_call(lambda: route.post(route.chat, body))
            return self._response_from_json(raw, request)
        arguments = self._arguments(request)
        raw = await self._sdk_call(lambda: self.client.chat.completions.create(**arguments))
        return self._response(raw, request)

    def _response(self, raw: Any, request: ModelRequest) -> ModelResponse:
        try:
            return self._read_response(raw, request)
        except (
            AttributeError,
            TypeError,
            ValueError,
        ) as exc:  # a body that parsed but is no completion
            raise MalformedResponse(
                f"the provider's answer does not have the shape of a completion: {exc}"
            ) from exc

    def _read_response(self, raw: Any, request: ModelRequest) -> ModelResponse:
        generations = []
        for choice in raw.choices or []:
            message = choice.message
            text = message.content or ""
            if request.output is not None and request.output.mode == "tool" and message.tool_calls:
                text = message.tool_calls[0].function.arguments or ""
            generations.append(
                Generation(
                    text=text, finish_reason=choice.finish_reason, logprobs=_logprobs(choice)
                )
            )
        if not generations:
            raise MalformedResponse(
                f"the provider returned no choices: {json.dumps(raw.model_dump())[:300]}"
            )
        usage = raw.usage
        return ModelResponse(
            generations=generations,
            usage=Usage(
                input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                requests=1,
            ),
            model=getattr(raw, "model", None) or self.model,
        )

    def _response_from_json(self, raw: Any, request: ModelRequest) -> ModelResponse:
        """Read a completion from its decoded JSON."""
        try:
            return self._read_json(raw, request)
        except (
            AttributeError,
            TypeError,
            ValueError,
            KeyError,
            IndexError,
        ) as exc:  # JSON, but no completion
            raise MalformedResponse(
                f"the provider's answer does not have the shape of a completion: {exc}"
            ) from exc

    def _read_json(self, raw: Any, request: ModelRequest) -> ModelResponse:
        tool = request.output is not None and request.output.mode == "tool"
        generations = []
        for choice in raw.get("choices") or []:
            message = choice.get("message") or {}
            text = message.get("content") or ""
            calls = message.get("tool_calls")
            if tool and calls:
                text = calls[0]["function"].get("arguments") or ""
            generations.append(
                Generation(
                    text=text,
                    finish_reason=choice.get("finish_reason"),
                    logprobs=_json_logprobs(choice),
                )
            )
        if not generations:
            raise MalformedResponse(f"the provider returned no choices: {json.dumps(raw)[:300]}")
        usage = raw.get("usage") or {}
        return ModelResponse(
            generations=generations,
            usage=Usage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
                requests=1,
            ),
            model=raw.get("model") or self.model,
        )

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        route = self._route()
        if route is not None:
            # As `embeddings.create` asks: base64-packed float32 vectors, decoded the same way.
            body = {"model": self.model, "input": texts, "encoding_format": "base64"}
            raw = await self._sdk_call(lambda: route.post(route.embeddings, body))
            try:
                return _embeddings_from_json(raw)
            except (AttributeError, TypeError, ValueError, KeyError, binascii.Error) as exc:
                raise MalformedResponse(
                    f"the provider's answer does not have the shape of embeddings: {exc}"
                ) from exc
        raw = await self._sdk_call(
            lambda: self.client.embeddings.create(model=self.model, input=texts)
        )
        try:
            ordered = sorted(raw.data, key=lambda item: item.index)
            tokens = getattr(raw.usage, "prompt_tokens", 0) or 0 if raw.usage else 0
            return [list(item.embedding) for item in ordered], tokens
        except (AttributeError, TypeError, ValueError) as exc:
            raise MalformedResponse(
                f"the provider's answer does not have the shape of embeddings: {exc}"
            ) from exc

    async def aclose(self) -> None:
        if self._clients is not None:
            await self._clients.get().close()


def _pool_of_its_own(client: Any) -> Any:
    """A copy of a caller's async client (same key, URL, headers, timeout, retries) with a new
    connection pool, for one of assay's temporary loops."""
    copy = getattr(client, "copy", None)
    if copy is None:
        return client  # not an openai client: nothing we can safely copy
    import openai

    return copy(http_client=openai.DefaultAsyncHttpxClient())


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


def _json_logprobs(choice: dict[str, Any]) -> list[TokenLogprob] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    return [
        TokenLogprob(
            token=item["token"],
            logprob=item["logprob"],
            top={alt["token"]: alt["logprob"] for alt in (item.get("top_logprobs") or [])},
        )
        for item in content
    ]


def _logprobs(choice: Any) -> list[TokenLogprob] | None:
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    return [
        TokenLogprob(
            token=item.token,
            logprob=item.logprob,
            top={alt.token: alt.logprob for alt in (item.top_logprobs or [])},
        )
        for item in content
    ]


def _embeddings_from_json(raw: Any) -> tuple[list[list[float]], int]:
    data = raw["data"]
    if not data:
        raise ValueError("No embedding data received")
    vectors = []
    for item in sorted(data, key=lambda item: item["index"]):
        vector = item["embedding"]
        if isinstance(vector, str):
            vectors.append(array.array("f", base64.b64decode(vector)).tolist())
        else:
            vectors.append([float(x) for x in vector])
    usage = raw.get("usage") or {}
    return vectors, usage.get("prompt_tokens") or 0


class _DirectRoute:
    """Requests on assay's own SDK client, sent on its HTTP client without the SDK's per-request
    machinery: the URL, headers (the SDK's and its HTTP client's, merged once), timeout and JSON
    encoding the SDK would use, and its status errors mapped as `translate_openai_error` maps
    them. Only for a client whose requests need nothing computed per request (a string API key,
    no default query, no provider runtime refreshing credentials)."""

    def __init__(self, httpx: Any, http: Any, base: Any, headers: Any, timeout: Any) -> None:
        self.httpx = httpx
        self.http = http
        self.headers = headers
        self.extensions = {"timeout": httpx.Timeout(timeout).as_dict()}
        self.chat = base.copy_with(raw_path=base.raw_path + b"chat/completions")
        self.embeddings = base.copy_with(raw_path=base.raw_path + b"embeddings")

    @classmethod
    def of(cls, client: Any, http: Any) -> _DirectRoute | bool:
        httpx = _sdk_http_module()
        if http is None or httpx is None or not isinstance(getattr(client, "api_key", None), str):
            return False
        if getattr(client, "_provider_runtime", None) is not None:
            return False
        try:
            if client.default_query:
                return False
            base = client.base_url
            if base.query or not base.raw_path.endswith(b"/"):
                return False
            timeout = client.timeout
            sdk_headers = {**client.auth_headers, **client.default_headers}
        except Exception:  # an SDK without these properties: its own way
            return False
        headers = httpx.Headers(http.headers)
        for name, value in sdk_headers.items():
            if isinstance(value, str):  # not Omit()
                headers[name] = value
        headers["x-stainless-retry-count"] = "0"
        read = timeout.read if isinstance(timeout, httpx.Timeout) else timeout
        if read is not None:
            headers["x-stainless-read-timeout"] = str(read)
        return cls(httpx, http, base, headers, timeout)

    async def post(self, url: Any, body: dict[str, Any]) -> Any:
        content = json.dumps(
            body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()
        if self.http.cookies:  # a server that set cookies gets them back, as through the SDK
            request = self.http.build_request(
                "POST", url, headers=self.headers, content=content, extensions=self.extensions
            )
        else:
            request = self.httpx.Request(
                "POST", url, headers=self.headers, content=content, extensions=self.extensions
            )
        response = await self.http.send(request)
        if not 200 <= response.status_code < 300:
            raise status_error(response.status_code, response.headers, response.text)
        return json.loads(response.content)


def lean_http_client() -> Any:
    """The openai SDK's default async HTTP client (its timeouts, limits, redirects, transport),
    kept beside the SDK client so `_DirectRoute` can send on it. None when the SDK's HTTP library
    is not one we recognise (the SDK then builds its own)."""
    import openai

    httpx = _sdk_http_module()
    if httpx is None:
        return None
    context = _shared_ssl_context(httpx)
    return openai.DefaultAsyncHttpxClient(**({"verify": context} if context is not None else {}))


def _shared_ssl_context(httpx: Any) -> Any:
    """httpx's default SSL context (verify=True, trust_env=True), made once per set of SSL_CERT_*
    variables instead of once per client: loading the CA bundle takes tens of milliseconds, and
    every event loop (every `evaluate()`) gets clients of its own."""
    create = getattr(httpx, "create_ssl_context", None)
    if create is None:
        return None
    key = (httpx.__name__, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        context = _SSL_CONTEXTS[key] = create()
    return context


_SSL_CONTEXTS: dict[tuple[str, str | None, str | None], Any] = {}


def _sdk_http_module() -> Any:
    """httpx or httpx2: the library the SDK's client class is built on."""
    import sys

    import openai

    for base in openai.DefaultAsyncHttpxClient.__mro__:
        module = sys.modules.get(base.__module__.split(".", 1)[0])
        if (
            base.__name__ == "AsyncClient"
            and module is not None
            and hasattr(module, "AsyncBaseTransport")
        ):
            return module
    return None


__all__ = ["OpenAICompatible", "lean_http_client", "retry_after_seconds", "translate_openai_error"]
