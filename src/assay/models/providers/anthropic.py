"""Anthropic's Messages API through the official `anthropic` client (extra `assay[anthropic]`).

Anthropic has no JSON-schema response format, so structured output uses a forced tool call,
falling back to the schema in the prompt.
"""

from __future__ import annotations

from typing import Any

from assay._util.deps import require
from assay._util.loop_local import LoopLocal
from assay.errors import ModelConnectionError, ModelTimeout, ProviderError, RateLimited
from assay.models.providers.base import Profile, Provider
from assay.models.providers.openai_compat import retry_after_seconds
from assay.models.types import Generation, ModelRequest, ModelResponse, Usage

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "stop"}


def translate_anthropic_error(exc: Exception) -> Exception:
    anthropic = require("anthropic", extra="anthropic")
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelTimeout(f"the request timed out: {exc}")
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelConnectionError(f"could not reach Anthropic: {exc}")
    if isinstance(exc, anthropic.APIStatusError):
        status, body = exc.status_code, getattr(exc.response, "text", str(exc))
        if status in (429, 529):
            return RateLimited(
                f"rate limited (HTTP {status}): {body[:300]}",
                retry_after=retry_after_seconds(exc.response.headers),
                status=status,
                body=body,
            )
        return ProviderError(f"HTTP {status}: {body[:500]}", status=status, body=body)
    return exc


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        super().__init__(
            model, profile=Profile(output_modes=("tool", "prompt"), multiple_completions=False)
        )
        if client is not None:
            self._given, self._clients = client, None
        else:
            anthropic = require("anthropic", extra="anthropic", feature="the Anthropic provider")
            self._given = None
            self._clients = LoopLocal(
                lambda: anthropic.AsyncAnthropic(
                    api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
                )
            )

    @property
    def client(self) -> Any:
        return self._given if self._clients is None else self._clients.get()

    def message_arguments(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API arguments of one request (also one line of a Message Batch)."""
        system = "\n\n".join(str(m.content) for m in request.messages if m.role == "system")
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in request.messages if m.role != "system"],
            "max_tokens": request.params.get("max_tokens") or 4096,
        }
        if system:
            arguments["system"] = system
        for key in ("temperature", "top_p", "stop"):
            if key in request.params:
                arguments["stop_sequences" if key == "stop" else key] = request.params[key]
        output = request.output
        if output is not None and output.mode == "tool":
            arguments["tools"] = [
                {
                    "name": output.name,
                    "description": "Record the answer.",
                    "input_schema": output.schema,
                }
            ]
            arguments["tool_choice"] = {"type": "tool", "name": output.name}
        return arguments

    async def complete(self, request: ModelRequest) -> ModelResponse:
        arguments = self.message_arguments(request)
        generations, usage = [], Usage()
        # The Messages API has no `n`: several completions are several requests.
        for _ in range(request.n):
            try:
                raw = await self.client.messages.create(**arguments)
            except Exception as exc:
                translated = translate_anthropic_error(exc)
                if translated is exc:
                    raise
                raise translated from exc
            generation, used = read_message(raw, request)
            generations.append(generation)
            usage = usage + used
        return ModelResponse(generations=generations, usage=usage, model=self.model)


def read_message(raw: Any, request: ModelRequest) -> tuple[Generation, Usage]:
    """One generation and its usage from a Messages API answer (an SDK `Message`)."""
    tool_mode = request.output is not None and request.output.mode == "tool"
    generation = Generation(
        text=_text(raw, tool_mode), finish_reason=_FINISH.get(raw.stop_reason, raw.stop_reason)
    )
    usage = Usage(
        input_tokens=raw.usage.input_tokens, output_tokens=raw.usage.output_tokens, requests=1
    )
    return generation, usage


def _text(raw: Any, tool_mode: bool) -> str:
    import json

    for block in raw.content:
        if tool_mode and getattr(block, "type", "") == "tool_use":
            return json.dumps(block.input)
    return "".join(getattr(block, "text", "") for block in raw.content)


__all__ = ["AnthropicProvider", "read_message", "translate_anthropic_error"]
