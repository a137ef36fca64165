"""Use a LlamaIndex LLM or embedding model as an assay provider (extra `assay[llamaindex]`).

    from llama_index.llms.openai import OpenAI
    judge = LlamaIndexLLMWrapper(OpenAI(model="gpt-4o-mini"))

LlamaIndex does the transport; assay adds its stack on top (structured output by prompt, tolerant
parsing and repair, retries on errors LlamaIndex surfaces, cache, usage).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._util.deps import require
from assay.models.providers.base import Profile, Provider
from assay.models.providers.langchain import call_translated
from assay.models.types import Generation, ModelRequest, ModelResponse, Usage

if TYPE_CHECKING:
    from assay.models.embeddings import Embeddings
    from assay.models.llm import LLM


class LlamaIndexProvider(Provider):
    name = "llamaindex"

    def __init__(self, llm: Any = None, *, embeddings: Any = None) -> None:
        require(
            "llama_index.core",
            extra="llamaindex",
            package="llama-index-core",
            feature="LlamaIndex models",
        )
        wrapped = llm if llm is not None else embeddings
        model = (
            getattr(wrapped, "model", None)
            or getattr(wrapped, "model_name", None)
            or type(wrapped).__name__
        )
        super().__init__(
            str(model),
            profile=Profile(output_modes=("prompt",), logprobs=False, multiple_completions=False),
        )
        self.llm = llm
        self.embeddings = embeddings

    def identity(self) -> dict[str, Any]:
        return {
            "provider": "llamaindex",
            "class": type(self.llm or self.embeddings).__name__,
            "model": self.model,
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.llm is None:
            raise TypeError("this LlamaIndex provider wraps an embedding model only")
        from llama_index.core.llms import ChatMessage

        messages = [ChatMessage(role=m.role, content=m.content) for m in request.messages]
        generations, usage = [], Usage()
        for _ in range(request.n):
            reply = await call_translated(lambda: self.llm.achat(messages))
            raw = reply.raw if isinstance(reply.raw, dict) else {}
            counts = raw.get("usage") or {}
            generations.append(
                Generation(text=str(reply.message.content or ""), finish_reason="stop")
            )
            usage = usage + Usage(
                input_tokens=counts.get("prompt_tokens", 0),
                output_tokens=counts.get("completion_tokens", 0),
                requests=1,
            )
        return ModelResponse(generations=generations, usage=usage, model=self.model)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        if self.embeddings is None:
            raise TypeError("this LlamaIndex provider wraps an LLM only")
        vectors = await call_translated(lambda: self.embeddings.aget_text_embedding_batch(texts))
        return [list(v) for v in vectors], 0


def LlamaIndexLLMWrapper(
    llm: Any, run_config: Any = None, cache: Any = None, **options: Any
) -> LLM:
    """An assay LLM over a LlamaIndex LLM (`run_config` sets the retry policy; `cache` as in llm_factory)."""
    from assay.models.llm import LLM
    from assay.models.providers.langchain import _wrapper_options

    return LLM(LlamaIndexProvider(llm), **_wrapper_options(run_config, cache, options))


def LlamaIndexEmbeddingsWrapper(
    embeddings: Any, run_config: Any = None, cache: Any = None, **options: Any
) -> Embeddings:
    """assay Embeddings over a LlamaIndex embedding model (`run_config`, `cache` as for the LLM wrapper)."""
    from assay.models.embeddings import Embeddings
    from assay.models.providers.langchain import _wrapper_options

    return Embeddings(
        LlamaIndexProvider(embeddings=embeddings), **_wrapper_options(run_config, cache, options)
    )


__all__ = ["LlamaIndexEmbeddingsWrapper", "LlamaIndexLLMWrapper", "LlamaIndexProvider"]
