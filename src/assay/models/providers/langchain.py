"""Use a LangChain chat model or embeddings as an assay provider (extra `assay[langchain]`).

    from langchain_openai import ChatOpenAI
    judge = llm_factory_from(ChatOpenAI(model="gpt-4o-mini"))   # or LangchainLLMWrapper(ChatOpenAI(...))

The LangChain object does the transport; assay adds its usual stack on top (structured output by
prompt + tolerant parsing + repair, retries on errors LangChain surfaces, cache, usage). LangChain
does not expose a uniform JSON-schema switch, so the structured-output ladder starts at the prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._util.deps import require
from assay.errors import ModelConnectionError, ModelTimeout, ProviderError, RateLimited
from assay.models.providers.base import Profile, Provider
from assay.models.types import Generation, ModelRequest, ModelResponse, Usage

if TYPE_CHECKING:
    from assay.models.embeddings import Embeddings
    from assay.models.llm import LLM

_ROLES = {"system": "system", "user": "human", "assistant": "ai"}


def _translate(exc: Exception) -> Exception:
    """LangChain passes the underlying SDK's exception through; classify it by its traits."""
    name = type(exc).__name__.lower()
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    if status == 429 or "ratelimit" in name:
        return RateLimited(f"rate limited: {exc}")
    if "timeout" in name:
        return ModelTimeout(str(exc))
    if "connection" in name:
        return ModelConnectionError(str(exc))
    if isinstance(status, int):
        return ProviderError(f"HTTP {status}: {exc}", status=status)
    return exc


async def call_translated(call: Any) -> Any:
    """Await `call()`, turning the wrapped library's errors into assay's typed model errors."""
    try:
        return await call()
    except Exception as exc:
        translated = _translate(exc)
        if translated is exc:
            raise
        raise translated from exc


class LangChainProvider(Provider):
    name = "langchain"

    def __init__(self, chat_model: Any = None, *, embeddings: Any = None) -> None:
        require(
            "langchain_core",
            extra="langchain",
            package="langchain-core",
            feature="LangChain models",
        )
        model = (
            getattr(chat_model, "model_name", None)
            or getattr(chat_model, "model", None)
            or type(chat_model or embeddings).__name__
        )
        super().__init__(
            str(model),
            profile=Profile(output_modes=("prompt",), logprobs=False, multiple_completions=False),
        )
        self.chat_model = chat_model
        self.embeddings = embeddings

    def identity(self) -> dict[str, Any]:
        return {
            "provider": "langchain",
            "class": type(self.chat_model or self.embeddings).__name__,
            "model": self.model,
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.chat_model is None:
            raise TypeError("this LangChain provider wraps embeddings only")
        messages = [(_ROLES[m.role], m.content) for m in request.messages]
        options = {
            k: v for k, v in request.params.items() if k in ("temperature", "max_tokens", "stop")
        }
        generations, usage = [], Usage()
        stop = {"stop": options["stop"]} if "stop" in options else {}
        for _ in range(request.n):
            reply = await call_translated(lambda: self.chat_model.ainvoke(messages, **stop))
            meta = getattr(reply, "usage_metadata", None) or {}
            finish = (getattr(reply, "response_metadata", None) or {}).get(
                "finish_reason"
            ) or "stop"
            generations.append(Generation(text=str(reply.content), finish_reason=finish))
            usage = usage + Usage(
                input_tokens=meta.get("input_tokens", 0),
                output_tokens=meta.get("output_tokens", 0),
                requests=1,
            )
        return ModelResponse(generations=generations, usage=usage, model=self.model)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        if self.embeddings is None:
            raise TypeError("this LangChain provider wraps a chat model only")
        vectors = await call_translated(lambda: self.embeddings.aembed_documents(texts))
        return [list(v) for v in vectors], 0


def _wrapper_options(run_config: Any, cache: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Ragas' wrapper arguments: `run_config` (its retry policy), `cache` (as in llm_factory)."""
    from assay.models.factory import _resolve_cache
    from assay.models.retry import run_config_options

    return {**run_config_options(run_config), "cache": _resolve_cache(cache), **options}


def LangchainLLMWrapper(
    langchain_llm: Any,
    run_config: Any = None,
    is_finished_parser: Any = None,
    cache: Any = None,
    bypass_temperature: bool = False,
    bypass_n: bool = False,
    **options: Any,
) -> LLM:
    """An assay LLM over a LangChain chat model. Ragas' arguments: `run_config` sets the retry policy;
    `cache` as in llm_factory; `is_finished_parser`, `bypass_temperature` and `bypass_n` are accepted
    and change nothing (completeness is read from the model's finish reason; LangChain is always
    called once per completion with the model's own temperature)."""
    from assay.models.llm import LLM

    return LLM(LangChainProvider(langchain_llm), **_wrapper_options(run_config, cache, options))


def LangchainEmbeddingsWrapper(
    embeddings: Any, run_config: Any = None, cache: Any = None, **options: Any
) -> Embeddings:
    """assay Embeddings over LangChain embeddings (`run_config`, `cache` as for the LLM wrapper)."""
    from assay.models.embeddings import Embeddings

    return Embeddings(
        LangChainProvider(embeddings=embeddings), **_wrapper_options(run_config, cache, options)
    )


__all__ = ["LangChainProvider", "LangchainEmbeddingsWrapper", "LangchainLLMWrapper"]
