"""Ragas' cache names over assay's one response cache (SQLite, `cache.py`).

    DiskCacheBackend(cache_dir=".cache")   an assay ResponseCache in cache_dir/cache.sqlite, with
                                           Ragas' get / set / has_key and `.cache` (len, clear, reset)
    llm_factory(..., cache=DiskCacheBackend())   the LLM's answers are kept there
    CacheInterface                         subclass for a store of your own; llm_factory and
                                           embedding_factory accept one (answers kept as JSON text)
    @cacher(cache_backend=...)             caches any sync or async function's results

No diskcache package is needed: the SQLite file is safe across threads and processes.
"""

from __future__ import annotations

import abc
import functools
import hashlib
import importlib
import inspect
import json
import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.models.cache import ResponseCache


class CacheInterface(abc.ABC):
    """A key-value store: `get(key)` (None when missing), `set(key, value)`, `has_key(key)`."""

    @abc.abstractmethod
    def get(self, key: str) -> Any: ...

    @abc.abstractmethod
    def set(self, key: str, value: Any) -> None: ...

    @abc.abstractmethod
    def has_key(self, key: str) -> bool: ...


# -- values as JSON (no pickle: a cache file must never be able to run code) ---------------------
def encode_value(value: Any) -> Any:
    """JSON-ready form of a cached value; pydantic models are tagged with their class."""
    if isinstance(value, BaseModel):
        cls = type(value)
        return {
            "__model__": f"{cls.__module__}:{cls.__qualname__}",
            "data": value.model_dump(mode="json"),
        }
    if isinstance(value, (list, tuple)):
        return [encode_value(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("only dicts with string keys can be cached")
        return {key: encode_value(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(
        f"a {type(value).__name__} cannot be cached (JSON values and pydantic models can)"
    )


def decode_value(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_value(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"__model__", "data"}:
            module, _, name = value["__model__"].partition(":")
            cls: Any = importlib.import_module(module)
            for part in name.split("."):
                cls = getattr(cls, part)
            if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
                raise TypeError(
                    f"cached value names {value['__model__']}, which is not a pydantic model"
                )
            return cls.model_validate(value["data"])
        return {key: decode_value(item) for key, item in value.items()}
    return value


class _Entries:
    """What Ragas' `DiskCacheBackend.cache` (a diskcache.Cache) is used for: len, clear, reset."""

    def __init__(self, owner: DiskCacheBackend) -> None:
        self._owner = owner

    def __len__(self) -> int:
        return int(self._owner.stats()["entries"])

    def clear(self) -> int:
        return self._owner.clear()

    def reset(self, name: str, value: Any = None) -> Any:
        """diskcache's tuning settings (size_limit, cull_limit, ...): accepted, SQLite needs none."""
        return value


class DiskCacheBackend(ResponseCache, CacheInterface):
    """A persistent cache in `cache_dir/cache.sqlite`, shared by LLM answers, embeddings and `cacher`."""

    def __init__(self, cache_dir: str | Path = ".cache") -> None:
        self.cache_dir = str(cache_dir)
        super().__init__(Path(cache_dir) / "cache.sqlite")

    def get(self, key: str) -> Any:
        raw = self._get("kv:" + key)
        return decode_value(json.loads(raw)) if raw is not None else None

    def set(self, key: str, value: Any) -> None:
        self._put("kv:" + key, "kv", "", json.dumps(encode_value(value), ensure_ascii=False))

    def has_key(self, key: str) -> bool:
        return self._get("kv:" + key) is not None

    @property
    def cache(self) -> _Entries:
        return _Entries(self)

    def __repr__(self) -> str:
        return f"DiskCacheBackend(cache_dir={self.cache_dir!r})"


# -- @cacher ----------------------------------------------------------------------------------------
def _key_part(value: Any) -> Any:
    """A stable stand-in for an argument: the same call in a later process gives the same key."""
    if isinstance(value, BaseModel):
        return {type(value).__qualname__: value.model_dump(mode="json")}
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, (list, tuple)):
        return [_key_part(item) for item in value]
    if isinstance(value, dict):
        return {
            str(key): _key_part(item)
            for key, item in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    identity = getattr(value, "identity", None)
    if callable(identity):  # assay's models: provider, model and endpoint
        return {type(value).__qualname__: identity()}
    model = getattr(value, "model", None)
    return {type(value).__qualname__: model if isinstance(model, str) else None}


def cache_key(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    payload = {
        "function": f"{func.__module__}.{func.__qualname__}",
        "args": _key_part(list(args)),
        "kwargs": _key_part(kwargs),
    }
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, default=str).encode("utf-8")
    ).hexdigest()


def cacher(cache_backend: CacheInterface | None = None) -> Any:
    """Cache a function's results in `cache_backend` (no backend: the function is returned as is).
    Results must be JSON values or pydantic models; others are returned without being cached."""

    def decorate(func: Any) -> Any:
        if cache_backend is None:
            return func

        def store(key: str, result: Any) -> None:
            try:
                cache_backend.set(key, result)
            except TypeError as exc:
                warnings.warn(f"{func.__qualname__}: result not cached ({exc})", stacklevel=3)

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                key = cache_key(func, args, kwargs)
                if cache_backend.has_key(key):
                    return cache_backend.get(key)
                result = await func(*args, **kwargs)
                store(key, result)
                return result

            return async_wrapper

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = cache_key(func, args, kwargs)
            if cache_backend.has_key(key):
                return cache_backend.get(key)
            result = func(*args, **kwargs)
            store(key, result)
            return result

        return wrapper

    return decorate


__all__ = ["CacheInterface", "DiskCacheBackend", "cache_key", "cacher"]
