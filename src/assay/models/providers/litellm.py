"""Every other provider through LiteLLM (extra `assay[litellm]`): Bedrock, Vertex, Gemini, Cohere...

LiteLLM answers in OpenAI's response shape and raises OpenAI-compatible exceptions, so the
OpenAI provider's parsing and error translation are reused.
"""

from __future__ import annotations

from typing import Any

from assay._util.deps import require
from assay.models.providers.base import Profile
from assay.models.providers.openai_compat import OpenAICompatible
from assay.models.types import ModelRequest, ModelResponse


class LiteLLMProvider(OpenAICompatible):
    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        **litellm_kwargs: Any,
    ) -> None:
        self._litellm = require("litellm", extra="litellm", feature="the LiteLLM provider")
        self.model = model
        self.profile = Profile(logprobs=False)
        self.base_url = base_url or litellm_kwargs.get("api_base") or ""
        self.api_key = (
            api_key  # for the endpoint's credential fingerprint (separate keys, separate quotas)
        )
        self.timeout = timeout
        self._extra = {
            "api_key": api_key,
            "api_base": base_url,
            "timeout": timeout,
            **litellm_kwargs,
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        arguments = self._arguments(request)
        arguments.update({k: v for k, v in self._extra.items() if v is not None})
        arguments.update(arguments.pop("extra_body", {}))
        self._is_async = True
        raw = await self._sdk_call(lambda: self._litellm.acompletion(**arguments))
        return self._response(raw, request)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        raw = await self._litellm.aembedding(
            model=self.model, input=texts, **{k: v for k, v in self._extra.items() if v is not None}
        )
        vectors = [item["embedding"] for item in sorted(raw.data, key=lambda item: item["index"])]
        return vectors, getattr(raw.usage, "prompt_tokens", 0) or 0

    async def aclose(self) -> None:
        return None


__all__ = ["LiteLLMProvider"]
