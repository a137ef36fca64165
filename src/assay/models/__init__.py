"""The one model-call path: providers, structured output, retries, rate limits, cache, usage.

Ragas' model names (`OpenAIEmbeddings`, `InstructorLLM`, `DiskCacheBackend`, ...) are doors into
the same LLM and Embeddings; they live in `assay.compat.ragas` and are imported from Ragas' paths
(`assay.llms`, `assay.embeddings`, `assay.cache`, `assay.cost`, `assay.tokenizers`).
"""

from assay.models.cache import KeyValueCache, ResponseCache, default_cache_path
from assay.models.cascade import Cascade, CascadeSummary
from assay.models.embeddings import Embeddings
from assay.models.factory import (
    embedding_factory,
    llm_factory,
    parse_model_string,
    register_provider,
)
from assay.models.limits import Limits
from assay.models.llm import LLM
from assay.models.providers.base import Profile, Provider
from assay.models.providers.langchain import LangchainEmbeddingsWrapper, LangchainLLMWrapper
from assay.models.providers.llamaindex import LlamaIndexEmbeddingsWrapper, LlamaIndexLLMWrapper
from assay.models.providers.scripted import ScriptedProvider
from assay.models.retry import RetryPolicy
from assay.models.types import ChatMessage, Generation, ModelResponse, TokenLogprob, Usage
from assay.models.usage import Budget, Price

__all__ = [
    "LLM",
    "Budget",
    "Cascade",
    "CascadeSummary",
    "ChatMessage",
    "Embeddings",
    "Generation",
    "KeyValueCache",
    "LangchainEmbeddingsWrapper",
    "LangchainLLMWrapper",
    "Limits",
    "LlamaIndexEmbeddingsWrapper",
    "LlamaIndexLLMWrapper",
    "ModelResponse",
    "Price",
    "Profile",
    "Provider",
    "ResponseCache",
    "RetryPolicy",
    "ScriptedProvider",
    "TokenLogprob",
    "Usage",
    "default_cache_path",
    "embedding_factory",
    "llm_factory",
    "parse_model_string",
    "register_provider",
]
