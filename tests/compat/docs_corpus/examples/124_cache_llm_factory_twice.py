# ruff: noqa
# Docs: Caching in Ragas > Caching with llm_factory
# Changes:
#   - ragas -> assay in imports
#   - filled in: the Response model of the page's previous cell
#   - model: OpenAI(api_key="...") reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
# corpus: expect-chat-requests 1
from pydantic import BaseModel  # filled in: previous cell


class Response(BaseModel):  # filled in: previous cell
    answer: str


from assay.cache import DiskCacheBackend
from assay.llms import llm_factory
from openai import OpenAI

# Create cache instance
cache = DiskCacheBackend()

# Create LLM with caching
client = OpenAI(api_key="...")
llm = llm_factory("gpt-4o-mini", client=client, cache=cache)

# First call - makes API request and caches result
response1 = llm.generate("Evaluate this text", Response)

# Second call - returns cached result instantly
response2 = llm.generate("Evaluate this text", Response)
# Result: Same output, 60x faster, $0 cost
