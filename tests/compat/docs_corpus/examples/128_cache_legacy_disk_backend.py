# ruff: noqa
# Docs: Caching in Ragas > Using Legacy Caching with LangchainLLMWrapper (first and logging cells)
# Changes:
#   - ragas -> assay in imports, and the logger name "ragas.cache" -> "assay.cache"
# corpus: expect-stdout 0
from assay.cache import DiskCacheBackend

cacher = DiskCacheBackend()

# check if the cache is empty and clear it
print(len(cacher.cache))
cacher.cache.clear()
print(len(cacher.cache))

# if you want to see the cache in action, set the logging level to debug
import logging
from assay.utils import set_logging_level

set_logging_level("assay.cache", logging.DEBUG)
