"""Embedding providers beyond OpenAI-compatible servers: Google (Gemini / Vertex AI), Hugging Face
(sentence-transformers, the Inference API, or the bundled ONNX models) and Azure OpenAI.

Each is behind an extra and imported at the first call, with the install line when it is missing:
`assay[google]` (google-genai), `assay[huggingface]` (sentence-transformers). The Hugging Face names of
the two bundled local models (all-MiniLM-L6-v2, multilingual-e5-small) run on the ONNX/C engines of
`assay[local]` instead, without torch.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import anyio

from assay._util.deps import require
from assay.errors import (
    MissingCredentials,
    MissingDependency,
    ModelConnectionError,
    ProviderError,
    RateLimited,
    UsageError,
)
from assay.models.providers.base import Profile, Provider
from assay.models.types import ModelRequest, ModelResponse


def _need(module: str, *, extra: str, package: str, feature: str) -> None:
    """Fail now, with the install line, if `module` cannot be imported later (without importing it:
    sentence-transformers pulls in torch)."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise MissingDependency(package, extra, feature)


def _translate(exc: Exception) -> Exception:
    status = getattr(exc, "code", None) or getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 429:
        return RateLimited(f"rate limited: {exc}")
    if isinstance(status, int):
        return ProviderError(f"HTTP {status}: {exc}", status=status)
    if "connect" in type(exc).__name__.lower():
        return ModelConnectionError(str(exc))
    return exc


class _EmbeddingOnly(Provider):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise UsageError(f"{self.model} is an embedding model; it cannot generate text")


# -- Google ----------------------------------------------------------------------------------------
class GoogleEmbeddingProvider(_EmbeddingOnly):
    """Gemini / Vertex AI embeddings through google-genai (`genai.Client`). A client of the older
    `google.generativeai` SDK (the module itself, as Ragas accepts) works too."""

    name = "google"

    def __init__(
        self,
        model: str = "gemini-embedding-001",
        *,
        client: Any = None,
        api_key: str | None = None,
        use_vertex: bool = False,
        project_id: str | None = None,
        location: str | None = "us-central1",
        task_type: str | None = None,
        output_dimensionality: int | None = None,
    ) -> None:
        super().__init__(
            model.removeprefix("models/") if client is None else model,
            profile=Profile(output_modes=()),
        )
        self.use_vertex = use_vertex
        self._config = {
            k: v
            for k, v in (("task_type", task_type), ("output_dimensionality", output_dimensionality))
            if v is not None
        }
        self._client = client
        if client is None:
            _need(
                "google.genai", extra="google", package="google-genai", feature="Google embeddings"
            )
            if use_vertex:
                project_id = project_id or os.environ.get("GOOGLE_CLOUD_PROJECT")
                if not project_id:
                    raise UsageError(
                        "Vertex AI embeddings need project_id=... or GOOGLE_CLOUD_PROJECT"
                    )
                self._settings: dict[str, Any] = {
                    "vertexai": True,
                    "project": project_id,
                    "location": location,
                }
            else:
                key = (
                    api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
                )
                if not key:
                    raise MissingCredentials("Google", "GOOGLE_API_KEY")
                self._settings = {"api_key": key}
            self.api_key = api_key

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "vertex": self.use_vertex, **self._config}

    def _sdk(self) -> Any:
        if self._client is None:
            genai = require(
                "google.genai", extra="google", package="google-genai", feature="Google embeddings"
            )
            self._client = genai.Client(**self._settings)
        return self._client

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        client = self._sdk()
        try:
            if hasattr(client, "aio"):  # google-genai
                result = await client.aio.models.embed_content(
                    model=self.model, contents=texts, config=self._config or None
                )
                return [list(item.values) for item in result.embeddings], 0
            if hasattr(
                client, "embed_content"
            ):  # google.generativeai (the module, or an object like it)
                name = self.model if self.model.startswith("models/") else f"models/{self.model}"
                result = await anyio.to_thread.run_sync(
                    lambda: client.embed_content(model=name, content=texts)
                )
                vectors = result["embedding"]
                return (
                    [list(vectors)]
                    if vectors and not isinstance(vectors[0], list)
                    else [list(v) for v in vectors]
                ), 0
        except Exception as exc:
            translated = _translate(exc)
            if translated is exc:
                raise
            raise translated from exc
        raise UsageError(
            f"cannot embed with a client of type {type(client).__name__}; pass a google-genai Client"
        )


# -- Hugging Face ------------------------------------------------------------------------------------
_BUNDLED_MINILM = ("sentence-transformers/all-minilm-l6-v2", "all-minilm-l6-v2", "minilm")
_BUNDLED_E5 = ("intfloat/multilingual-e5-small", "multilingual-e5-small", "e5")


class SentenceTransformersProvider(_EmbeddingOnly):
    """A sentence-transformers model on this machine (loaded at the first call, on a worker thread)."""

    name = "huggingface"

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        normalize_embeddings: bool = True,
        model_kwargs: dict[str, Any] | None = None,
        encode_kwargs: dict[str, Any] | None = None,
        cache_folder: str | None = None,
    ) -> None:
        _need(
            "sentence_transformers",
            extra="huggingface",
            package="sentence-transformers",
            feature="Hugging Face embeddings",
        )
        super().__init__(model, profile=Profile(output_modes=()))
        self.device = device
        self.normalize = normalize_embeddings
        self._model_kwargs = dict(model_kwargs or {})
        self._encode_kwargs = dict(encode_kwargs or {})
        self._cache_folder = cache_folder
        self._model: Any = None

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "normalize": self.normalize, "encode": self._encode_kwargs}

    def _embed_sync(self, texts: list[str]) -> list[list[float]]:
        if self._model is None:
            st = require(
                "sentence_transformers",
                extra="huggingface",
                package="sentence-transformers",
                feature="Hugging Face embeddings",
            )
            self._model = st.SentenceTransformer(
                self.model,
                device=self.device,
                cache_folder=self._cache_folder,
                **self._model_kwargs,
            )
        vectors = self._model.encode(
            texts, normalize_embeddings=self.normalize, **self._encode_kwargs
        )
        return [list(map(float, vector)) for vector in vectors]

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        return await anyio.to_thread.run_sync(self._embed_sync, texts), 0


class HuggingFaceInferenceProvider(_EmbeddingOnly):
    """A model hosted by Hugging Face's Inference API (`use_api=True`; huggingface_hub)."""

    name = "huggingface-api"

    def __init__(self, model: str, *, api_key: str | None = None) -> None:
        _need(
            "huggingface_hub",
            extra="huggingface",
            package="huggingface-hub",
            feature="the Hugging Face API",
        )
        super().__init__(model, profile=Profile(output_modes=()))
        self.api_key = (
            api_key or os.environ.get("HF_TOKEN") or os.environ.get("HUGGINGFACE_API_KEY")
        )
        if not self.api_key:
            raise MissingCredentials("The Hugging Face API", "HF_TOKEN")

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        hub = require(
            "huggingface_hub",
            extra="huggingface",
            package="huggingface-hub",
            feature="the Hugging Face API",
        )
        client = hub.AsyncInferenceClient(token=self.api_key)
        vectors = []
        try:
            for text in texts:
                vectors.append(
                    [
                        float(x)
                        for x in (await client.feature_extraction(text, model=self.model)).ravel()
                    ]
                )
        except Exception as exc:
            translated = _translate(exc)
            if translated is exc:
                raise
            raise translated from exc
        return vectors, 0


def huggingface_provider(
    model: str, *, api_key: str | None = None, use_api: bool = False, **options: Any
) -> Provider:
    """The bundled ONNX models for their Hugging Face names; otherwise sentence-transformers (or the API)."""
    if use_api:
        return HuggingFaceInferenceProvider(model, api_key=api_key)
    key = model.lower()
    if key in _BUNDLED_MINILM or key in _BUNDLED_E5:
        from assay.models.local_embeddings import local_embedding_provider

        return local_embedding_provider("minilm" if key in _BUNDLED_MINILM else "e5")
    return SentenceTransformersProvider(model, **options)


# -- Azure OpenAI -----------------------------------------------------------------------------------
def azure_provider(
    model: str,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    api_version: str | None = None,
    azure_endpoint: str | None = None,
    azure_deployment: str | None = None,
) -> Provider:
    """Azure OpenAI: a caller's `AzureOpenAI` client, or one built from the arguments and the
    AZURE_OPENAI_API_KEY / AZURE_OPENAI_ENDPOINT / OPENAI_API_VERSION variables."""
    from assay.models.providers.openai_compat import OpenAICompatible

    if client is None:
        import openai

        key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        if not key:
            raise MissingCredentials("Azure OpenAI", "AZURE_OPENAI_API_KEY")
        endpoint = azure_endpoint or base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise UsageError("Azure OpenAI needs azure_endpoint=... (or AZURE_OPENAI_ENDPOINT)")
        version = api_version or os.environ.get("OPENAI_API_VERSION")
        if not version:
            raise UsageError("Azure OpenAI needs api_version=... (or OPENAI_API_VERSION)")
        client = openai.AsyncAzureOpenAI(
            api_key=key,
            azure_endpoint=endpoint,
            api_version=version,
            azure_deployment=azure_deployment,
            max_retries=0,
            timeout=timeout,
        )
    return OpenAICompatible(model, client=client, timeout=timeout, name="azure")


__all__ = [
    "GoogleEmbeddingProvider",
    "HuggingFaceInferenceProvider",
    "SentenceTransformersProvider",
    "azure_provider",
    "huggingface_provider",
]
