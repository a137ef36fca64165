# ruff: noqa
# Docs: Caching in Ragas > Cache Management (Clearing the Cache, Setting Size Limits, Cache Location)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the DiskCacheBackend import of the page's earlier cells
from assay.cache import DiskCacheBackend  # filled in: earlier cells

# Clear all cached data
cache = DiskCacheBackend()
cache.cache.clear()

# Limit cache to 1GB
cache = DiskCacheBackend()
cache.cache.reset("size_limit", 1e9)  # 1GB
cache.cache.reset("cull_limit", 10)  # Remove 10% when full

cache = DiskCacheBackend(cache_dir="my_custom_cache")
