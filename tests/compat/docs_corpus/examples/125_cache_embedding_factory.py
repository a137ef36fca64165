# ruff: noqa
# Docs: Caching in Ragas > Caching with embedding_factory
# Changes:
#   - ragas -> assay in imports
#   - model: OpenAI(api_key="...") reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
# corpus: expect-embedding-requests 1
from assay.cache import DiskCacheBackend
from assay.embeddings import embedding_factory
from openai import OpenAI

cache = DiskCacheBackend()
client = OpenAI(api_key="...")
embeddings = embedding_factory("openai", client=client, cache=cache)

# First call - makes API request
vector1 = embeddings.embed_text("Some text to embed")

# Second call - instant cache hit
vector2 = embeddings.embed_text("Some text to embed")

assert vector1 == vector2  # Identical results
