"""Ragas' model classes as thin doors into assay's one `LLM` and one `Embeddings`.

Each name builds the same object `llm_factory` / `embedding_factory` would, so every model gets
assay's stack (structured output, completeness, retries, rate limits, cache, usage):

    OpenAIEmbeddings(client=AsyncOpenAI(), model="text-embedding-3-small")
    GoogleEmbeddings(model="gemini-embedding-001")                  assay[google]
    HuggingFaceEmbeddings(model="BAAI/bge-small-en-v1.5")           assay[huggingface]
    LiteLLMEmbeddings(model="azure/my-deployment", api_base=...)    assay[litellm]
    InstructorLLM(client=OpenAI(), model="gpt-4o-mini", provider="openai")
    LiteLLMStructuredLLM(client=litellm.completion, model="gemini/gemini-2.0-flash", provider="google")

`BaseRagasLLM` and `BaseRagasEmbedding(s)` are for models of your own: subclass, implement Ragas'
methods (`agenerate_text` / `generate_text`; `aembed_text` / `embed_text` or the LangChain-style
`embed_documents` / `embed_query`), and the object is an assay LLM / Embeddings whose provider
calls those methods.
"""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from assay.errors import OutputTruncated, UsageError
from assay.models.embeddings import Embeddings
from assay.models.factory import _resolve_cache, embedding_factory, llm_factory
from assay.models.llm import LLM
from assay.models.providers.base import Profile, Provider
from assay.models.retry import RetryPolicy, run_config_options
from assay.models.types import ChatMessage, Generation, ModelRequest, ModelResponse, Usage

# Ragas raises this when an answer stopped at its token limit; assay's name for it is OutputTruncated
# (after asking again with a bigger budget), so `except LLMDidNotFinishException` catches assay's.
LLMDidNotFinishException = OutputTruncated
# The structured-output LLM base class of Ragas is assay's LLM: agenerate(prompt, schema) parses.
InstructorBaseRagasLLM = LLM


def get_temperature(self: Any, n: int) -> float:
    """Ragas' sampling temperature for `n` completions: 0.3 when several are asked, else 0.01.
    assay's own calls are made at temperature 0 unless told otherwise; this is for code that asks."""
    return 0.3 if n > 1 else 0.01


def _adopt(target: Any, built: Any) -> None:
    """Make `target` (a door class instance) the object a factory built."""
    target.__dict__.update(built.__dict__)


# -- embeddings -----------------------------------------------------------------------------------
class OpenAIEmbeddings(Embeddings):
    def __init__(
        self,
        client: Any = None,
        model: str = "text-embedding-3-small",
        cache: Any = True,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int | None = None,
        **options: Any,
    ) -> None:
        _adopt(
            self,
            embedding_factory(
                "openai",
                model=model,
                client=client,
                cache=cache,
                api_key=api_key,
                base_url=base_url,
                batch_size=batch_size,
                **options,
            ),
        )


class GoogleEmbeddings(Embeddings):
    """google-genai (`assay[google]`); `use_vertex=True` for Vertex AI (project_id, location)."""

    def __init__(
        self,
        client: Any = None,
        model: str = "gemini-embedding-001",
        use_vertex: bool = False,
        project_id: str | None = None,
        location: str | None = "us-central1",
        cache: Any = True,
        **options: Any,
    ) -> None:
        _adopt(
            self,
            embedding_factory(
                "google",
                model=model,
                client=client,
                cache=cache,
                use_vertex=use_vertex,
                project_id=project_id,
                location=location,
                **options,
            ),
        )


class HuggingFaceEmbeddings(Embeddings):
    """sentence-transformers on this machine (`assay[huggingface]`), the Inference API with
    `use_api=True`, or the bundled ONNX models for all-MiniLM-L6-v2 and multilingual-e5-small."""

    def __init__(
        self,
        model: str | None = None,
        use_api: bool = False,
        api_key: str | None = None,
        device: str | None = None,
        normalize_embeddings: bool = True,
        batch_size: int = 32,
        cache: Any = True,
        *,
        model_name: str | None = None,
        encode_kwargs: dict[str, Any] | None = None,
        cache_folder: str | None = None,
        model_kwargs: dict[str, Any] | None = None,
        **more_model_kwargs: Any,
    ) -> None:
        name = model or model_name
        if not name:
            raise UsageError(
                "HuggingFaceEmbeddings needs model=... (e.g. 'BAAI/bge-small-en-v1.5')"
            )
        options: dict[str, Any] = {"use_api": use_api}
        if not use_api:
            options.update(
                device=device,
                normalize_embeddings=normalize_embeddings,
                cache_folder=cache_folder,
                model_kwargs={**(model_kwargs or {}), **more_model_kwargs},
                encode_kwargs=encode_kwargs,
            )
        _adopt(
            self,
            embedding_factory(
                "huggingface",
                model=name,
                api_key=api_key,
                batch_size=batch_size,
                cache=cache,
                **options,
            ),
        )


class HuggingfaceEmbeddings(HuggingFaceEmbeddings):
    """Ragas' legacy spelling: `HuggingfaceEmbeddings(model_name=..., cache_folder=..., model_kwargs=...,
    encode_kwargs=...)`. Cross-encoder `predict` is not offered (assay has no cross-encoder metric)."""

    def __init__(
        self,
        model_name: str | None = None,
        cache_folder: str | None = None,
        model_kwargs: dict[str, Any] | None = None,
        encode_kwargs: dict[str, Any] | None = None,
        cache: Any = True,
        **options: Any,
    ) -> None:
        super().__init__(
            model_name=model_name,
            cache_folder=cache_folder,
            model_kwargs=model_kwargs,
            encode_kwargs=encode_kwargs,
            cache=cache,
            **options,
        )


class LiteLLMEmbeddings(Embeddings):
    """Any embedding model LiteLLM reaches (`assay[litellm]`). `max_retries` is assay's retry policy;
    `timeout` is one request's whole duration."""

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        api_base: str | None = None,
        api_version: str | None = None,
        timeout: float = 600,
        max_retries: int = 3,
        batch_size: int | None = None,
        cache: Any = True,
        **litellm_params: Any,
    ) -> None:
        if not isinstance(max_retries, int) or max_retries < 0:
            raise UsageError(
                f"max_retries must be a whole number of 0 or more, got {max_retries!r}"
            )
        options: dict[str, Any] = {
            k: v for k, v in (("api_base", api_base), ("api_version", api_version)) if v is not None
        }
        _adopt(
            self,
            embedding_factory(
                "litellm",
                model=model,
                api_key=api_key,
                timeout=timeout,
                retry=RetryPolicy(max_attempts=max_retries + 1),
                batch_size=batch_size or 10,
                cache=cache,
                **options,
                **litellm_params,
            ),
        )


def _overrides(obj: Any, base: type, name: str) -> bool:
    return getattr(type(obj), name, None) is not getattr(base, name, None)


class _OwnEmbeddingMethods(Provider):
    """Embeds by calling the methods a BaseRagasEmbedding subclass implements."""

    name = "custom"

    def __init__(self, owner: BaseRagasEmbedding) -> None:
        super().__init__(type(owner).__name__, profile=Profile(output_modes=()))
        self.owner = owner

    def identity(self) -> dict[str, Any]:
        model = self.owner.__dict__.get("model")
        return {
            "provider": "custom",
            "class": type(self.owner).__qualname__,
            "model": model if isinstance(model, str) else self.model,
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise UsageError(
            f"{type(self.owner).__name__} is an embedding model; it cannot generate text"
        )

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        owner, base = self.owner, BaseRagasEmbedding
        cls = type(owner)
        if _overrides(owner, base, "aembed_texts"):
            vectors = await cls.aembed_texts(owner, texts)
        elif _overrides(owner, base, "aembed_documents"):
            vectors = await cls.aembed_documents(owner, texts)
        elif _overrides(owner, base, "aembed_text"):
            vectors = [await cls.aembed_text(owner, text) for text in texts]
        elif _overrides(owner, base, "aembed_query"):
            vectors = [await cls.aembed_query(owner, text) for text in texts]
        else:
            sync = next(
                (
                    name
                    for name in ("embed_texts", "embed_documents", "embed_text", "embed_query")
                    if _overrides(owner, base, name)
                ),
                None,
            )
            if sync is None:
                raise TypeError(
                    f"{cls.__name__} implements no embedding method; define aembed_text and embed_text "
                    "(or embed_documents and embed_query)"
                )
            method = getattr(cls, sync)
            if sync in ("embed_texts", "embed_documents"):
                vectors = await anyio.to_thread.run_sync(lambda: method(owner, texts))
            else:
                vectors = await anyio.to_thread.run_sync(
                    lambda: [method(owner, text) for text in texts]
                )
        return [list(map(float, vector)) for vector in vectors], 0


class BaseRagasEmbedding(Embeddings):
    """Subclass for an embedding model of your own; call `super().__init__(cache=...)` (optional)."""

    def __init__(self, cache: Any = None, **options: Any) -> None:
        Embeddings.__init__(
            self, _OwnEmbeddingMethods(self), cache=_resolve_cache(cache), **options
        )

    def __getattr__(self, name: str) -> Any:
        # A subclass that never called super().__init__() still gets assay's machinery.
        if (
            name.startswith("__")
            or "provider" in self.__dict__
            or self.__dict__.get("_initialising")
        ):
            raise AttributeError(name)
        self.__dict__["_initialising"] = True
        try:
            BaseRagasEmbedding.__init__(self)
        finally:
            self.__dict__.pop("_initialising", None)
        return getattr(self, name)

    @property
    def model(self) -> str:
        model = self.__dict__.get("model")
        return model if isinstance(model, str) else self.provider.model

    @model.setter
    def model(self, value: str) -> None:
        self.__dict__["model"] = value

    def set_run_config(self, run_config: Any) -> None:
        self.run_config = run_config
        self.retry = run_config_options(run_config).get("retry") or self.retry


BaseRagasEmbeddings = BaseRagasEmbedding  # Ragas' legacy name; one class serves both interfaces


# -- LLMs -------------------------------------------------------------------------------------------
class InstructorModelArgs(BaseModel):
    """Ragas' default model arguments. assay's defaults differ (temperature 0, no max_tokens cap, an
    answer cut off at its limit asked again); pass `model_args=InstructorModelArgs()` for Ragas' values."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = 0.01
    top_p: float = 0.1
    max_tokens: int = 1024


class InstructorLLM(LLM):
    """Ragas' InstructorLLM(client, model, provider): the LLM `llm_factory` builds (no instructor needed)."""

    def __init__(
        self,
        client: Any,
        model: str,
        provider: str = "openai",
        model_args: Any = None,
        cache: Any = None,
        **kwargs: Any,
    ) -> None:
        _adopt(
            self,
            llm_factory(
                model,
                provider=provider,
                client=client,
                model_args=model_args,
                cache=cache,
                **kwargs,
            ),
        )


class LiteLLMStructuredLLM(LLM):
    """Ragas' LiteLLM adapter: `client` is `litellm.completion` (or the module); assay[litellm]."""

    def __init__(
        self,
        client: Any,
        model: str,
        provider: str = "litellm",
        cache: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> None:
        name = (
            model
            if provider.lower() not in ("google", "gemini") or "/" in model
            else f"gemini/{model}"
        )
        _adopt(
            self,
            llm_factory(
                name,
                provider="litellm",
                client=client,
                cache=cache,
                system_prompt=system_prompt,
                **kwargs,
            ),
        )


class PromptValue:
    """What Ragas hands `generate_text`: the prompt as text (`.text`, `to_string()`) and as messages."""

    def __init__(self, messages: tuple[ChatMessage, ...] | list[ChatMessage]) -> None:
        self.messages = list(messages)
        if len(self.messages) == 1 and isinstance(self.messages[0].content, str):
            self.text = self.messages[0].content
        else:
            self.text = "\n\n".join(f"{m.role}: {m.content}" for m in self.messages)

    def to_string(self) -> str:
        return self.text

    def to_messages(self) -> list[dict[str, Any]]:
        return [message.model_dump() for message in self.messages]

    def __repr__(self) -> str:
        return f"PromptValue(text={self.text!r})"


def _texts_of(result: Any) -> list[str]:
    """Texts of what a generate_text returned: an LLMResult (generations[0][i].text), strings."""
    if isinstance(result, str):
        return [result]
    generations = getattr(result, "generations", None)
    if generations is not None:
        first = generations[0] if generations else []
        return [str(getattr(g, "text", g)) for g in (first if isinstance(first, list) else [first])]
    if isinstance(result, (list, tuple)) and all(isinstance(item, str) for item in result):
        return list(result)
    raise TypeError(
        f"generate_text returned a {type(result).__name__}; return an LLMResult or text"
    )


class _OwnLLMMethods(Provider):
    """Calls the `agenerate_text` / `generate_text` of a BaseRagasLLM subclass."""

    name = "custom"

    def __init__(self, owner: BaseRagasLLM, multiple: bool) -> None:
        super().__init__(
            type(owner).__name__,
            profile=Profile(
                output_modes=("prompt",), logprobs=False, multiple_completions=multiple
            ),
        )
        self.owner = owner

    def identity(self) -> dict[str, Any]:
        model = self.owner.__dict__.get("_model_name")
        return {
            "provider": "custom",
            "class": type(self.owner).__qualname__,
            "model": model if isinstance(model, str) else self.model,
        }

    async def _one(self, prompt: PromptValue, n: int, temperature: Any, stop: Any) -> Any:
        owner, cls = self.owner, type(self.owner)
        if _overrides(owner, BaseRagasLLM, "agenerate_text"):
            return await cls.agenerate_text(owner, prompt, n=n, temperature=temperature, stop=stop)
        if _overrides(owner, BaseRagasLLM, "generate_text"):
            return await anyio.to_thread.run_sync(
                lambda: cls.generate_text(owner, prompt, n=n, temperature=temperature, stop=stop)
            )
        raise TypeError(f"{cls.__name__} implements neither agenerate_text nor generate_text")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        prompt = PromptValue(request.messages)
        temperature = request.params.get("temperature")
        if temperature is None:
            temperature = self.owner.get_temperature(request.n)
        stop = request.params.get("stop")
        results = (
            [await self._one(prompt, request.n, temperature, stop)]
            if self.profile.multiple_completions
            else [await self._one(prompt, 1, temperature, stop) for _ in range(request.n)]
        )
        generations = []
        for result in results:
            finished = self.owner.is_finished(result)
            generations += [
                Generation(text=text, finish_reason="stop" if finished else "length")
                for text in _texts_of(result)
            ]
        return ModelResponse(
            generations=generations[: request.n],
            usage=Usage(requests=len(results)),
            model=self.model,
        )


class BaseRagasLLM(LLM):
    """Subclass for a model of your own and implement `agenerate_text(prompt, n, temperature, stop,
    callbacks)` (or `generate_text`), returning a LangChain LLMResult or text. `is_finished(result)`
    says whether an answer is complete (default: yes); an unfinished one is asked again with twice
    the token budget, then `LLMDidNotFinishException`."""

    def __init__(
        self,
        run_config: Any = None,
        multiple_completion_supported: bool = False,
        cache: Any = None,
        **options: Any,
    ) -> None:
        self.run_config = run_config
        self.multiple_completion_supported = multiple_completion_supported
        LLM.__init__(
            self,
            _OwnLLMMethods(self, multiple_completion_supported),
            cache=_resolve_cache(cache),
            **{**run_config_options(run_config), **options},
        )

    def __getattr__(self, name: str) -> Any:
        if (
            name.startswith("__")
            or "provider" in self.__dict__
            or self.__dict__.get("_initialising")
        ):
            raise AttributeError(name)
        self.__dict__["_initialising"] = True
        try:
            BaseRagasLLM.__init__(self)
        finally:
            self.__dict__.pop("_initialising", None)
        return getattr(self, name)

    @property
    def model(self) -> str:
        model = self.__dict__.get("_model_name")
        return model if isinstance(model, str) else self.provider.model

    @model.setter
    def model(self, value: str) -> None:
        self.__dict__["_model_name"] = value

    get_temperature = get_temperature  # the module function, as a method

    def is_finished(self, response: Any) -> bool:
        return True

    def set_run_config(self, run_config: Any) -> None:
        self.run_config = run_config
        self.retry = run_config_options(run_config).get("retry") or self.retry

    async def agenerate_text(
        self,
        prompt: Any,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
    ) -> Any:
        raise NotImplementedError

    def generate_text(
        self,
        prompt: Any,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
    ) -> Any:
        raise NotImplementedError


__all__ = [
    "BaseRagasEmbedding",
    "BaseRagasEmbeddings",
    "BaseRagasLLM",
    "GoogleEmbeddings",
    "HuggingFaceEmbeddings",
    "HuggingfaceEmbeddings",
    "InstructorBaseRagasLLM",
    "InstructorLLM",
    "InstructorModelArgs",
    "LLMDidNotFinishException",
    "LiteLLMEmbeddings",
    "LiteLLMStructuredLLM",
    "OpenAIEmbeddings",
    "PromptValue",
    "run_config_options",
]
