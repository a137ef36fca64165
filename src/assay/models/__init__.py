"""The one model-call path: providers, structured output, retries, rate limits, cache, usage.

Ragas' model names are here too, as thin doors into the same LLM and Embeddings (see
`ragas_models.py`, `ragas_cache.py`, `cost.py`, `tokenizers.py` and docs/coming-from-ragas.md).
"""

from assay.models.cache import ResponseCache, default_cache_path
from assay.models.cost import (
    CostCallbackHandler,
    TokenUsage,
    TokenUsageParser,
    get_token_usage_for_anthropic,
    get_token_usage_for_openai,
)
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
from assay.models.ragas_cache import CacheInterface, DiskCacheBackend, cacher
from assay.models.ragas_models import (
    BaseRagasEmbedding,
    BaseRagasEmbeddings,
    BaseRagasLLM,
    GoogleEmbeddings,
    HuggingFaceEmbeddings,
    HuggingfaceEmbeddings,
    InstructorBaseRagasLLM,
    InstructorLLM,
    InstructorModelArgs,
    LiteLLMEmbeddings,
    LiteLLMStructuredLLM,
    LLMDidNotFinishException,
    OpenAIEmbeddings,
)
from assay.models.retry import RetryPolicy
from assay.models.tokenizers import (
    BaseTokenizer,
    HuggingFaceTokenizer,
    TiktokenWrapper,
    get_default_tokenizer,
    get_tokenizer,
)
from assay.models.types import ChatMessage, Generation, ModelResponse, TokenLogprob, Usage
from assay.models.usage import Budget, Price

__all__ = [
    "LLM",
    "BaseRagasEmbedding",
    "BaseRagasEmbeddings",
    "BaseRagasLLM",
    "BaseTokenizer",
    "Budget",
    "CacheInterface",
    "ChatMessage",
    "CostCallbackHandler",
    "DiskCacheBackend",
    "Embeddings",
    "Generation",
    "GoogleEmbeddings",
    "HuggingFaceEmbeddings",
    "HuggingFaceTokenizer",
    "HuggingfaceEmbeddings",
    "InstructorBaseRagasLLM",
    "InstructorLLM",
    "InstructorModelArgs",
    "LLMDidNotFinishException",
    "LangchainEmbeddingsWrapper",
    "LangchainLLMWrapper",
    "Limits",
    "LiteLLMEmbeddings",
    "LiteLLMStructuredLLM",
    "LlamaIndexEmbeddingsWrapper",
    "LlamaIndexLLMWrapper",
    "ModelResponse",
    "OpenAIEmbeddings",
    "Price",
    "Profile",
    "Provider",
    "ResponseCache",
    "RetryPolicy",
    "ScriptedProvider",
    "TiktokenWrapper",
    "TokenLogprob",
    "TokenUsage",
    "TokenUsageParser",
    "Usage",
    "cacher",
    "default_cache_path",
    "embedding_factory",
    "get_default_tokenizer",
    "get_token_usage_for_anthropic",
    "get_token_usage_for_openai",
    "get_tokenizer",
    "llm_factory",
    "parse_model_string",
    "register_provider",
]
