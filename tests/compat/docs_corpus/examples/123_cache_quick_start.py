# ruff: noqa
# Docs: Caching in Ragas > Using Caching with Modern LLMs and Embeddings > Quick Start
# Changes:
#   - ragas -> assay in imports
#   - model: OpenAI(api_key="...") reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from assay.cache import DiskCacheBackend
from assay.llms import llm_factory
from openai import OpenAI

# Create cache once
cache = DiskCacheBackend()

# Use with LLM factory
client = OpenAI(api_key="...")
llm = llm_factory("gpt-4o-mini", client=client, cache=cache)

# All LLM calls are now cached!
from pydantic import BaseModel


class Response(BaseModel):
    answer: str


response = llm.generate("Evaluate this...", Response)
