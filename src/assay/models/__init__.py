"""The one model-call path: providers, structured output, retries, rate limits, cache, usage."""

from assay.models.cache import ResponseCache, default_cache_path
from assay.models.embeddings import Embeddings
from assay.models.factory import embedding_factory, llm_factory, parse_model_string
from assay.models.limits import Limits
from assay.models.llm import LLM
from assay.models.providers.base import Profile, Provider
from assay.models.providers.scripted import ScriptedProvider
from assay.models.retry import RetryPolicy
from assay.models.types import ChatMessage, Generation, ModelResponse, TokenLogprob, Usage
from assay.models.usage import Budget, Price

__all__ = [
    "LLM",
    "Budget",
    "ChatMessage",
    "Embeddings",
    "Generation",
    "Limits",
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
]
