"""Sending a run's metrics, with their models, to Ray worker processes.

A metric holds its judge (`LLM`) and embeddings, and those hold things that belong to one process:
the endpoint's limiter and calls in flight (threading locks), the SQLite connection of the response
cache, HTTP clients kept per event loop. They are pickled here as *recipes* and rebuilt on the
worker:

- an `Endpoint` becomes the worker's one `Endpoint` for that key, whose limiter leases from the
  run's global limiter actor for the endpoint (`ray/limits.py`), so every worker spends one budget;
- a `ResponseCache` reopens the same SQLite file (one node, or a shared file system) or the same
  PostgreSQL database (`cache_postgres.py`, any cluster);
- a local GGUF judge (`LocalProvider`) becomes a provider calling its node's judge actor
  (`ray/local.py`) instead of loading the model in every worker;
- a per-loop holder (`LoopLocal`) starts empty and builds its clients on the worker's loops;
- a lock is a new lock.

`ship(metrics)` also returns the endpoints it met, so the driver can start one limiter per endpoint
before the workers exist. API keys travel inside the pickled providers, as they must for the
workers to call the endpoint; assay writes none of them to disk.
"""

from __future__ import annotations

import io
import pickle
import threading
from typing import Any

from assay._util.loop_local import LoopLocal
from assay.errors import UsageError
from assay.models.cache import ResponseCache, open_cache
from assay.models.endpoint import Endpoint
from assay.models.limits import Limits
from assay.models.local import LocalProvider

_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


def ship(metrics: list[Any]) -> tuple[bytes, dict[str, Limits]]:
    """The metrics as bytes a worker can load, and the endpoints (key -> limits) they use."""
    import cloudpickle

    endpoints: dict[str, Limits] = {}

    class _Shipping(cloudpickle.Pickler):  # type: ignore[misc]  # cloudpickle ships no types
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, Endpoint):
                endpoints[obj.key] = obj.limiter.limits
                return _endpoint_on_worker, (obj.key, obj.limiter.limits)
            if isinstance(obj, LocalProvider):  # the node's judge actor serves it (ray/local.py)
                from assay.engine.ray.local import provider_on_worker

                return provider_on_worker, (obj.settings, obj.timeout)
            if isinstance(obj, ResponseCache):
                # The SQLite file's path, or the PostgreSQL URL (with its password: the workers
                # must log in too)
                return _cache_on_worker, (
                    getattr(obj, "url", None) or str(obj.path),
                    obj.replay_only,
                )
            if isinstance(obj, LoopLocal):
                return LoopLocal, (obj._factory,)
            if isinstance(obj, _LOCK_TYPES):
                return _new_lock, (isinstance(obj, _LOCK_TYPES[1]),)
            return super().reducer_override(obj)

    def dump(value: Any) -> bytes:
        buffer = io.BytesIO()
        _Shipping(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
        return buffer.getvalue()

    try:
        # One pickle for all: a judge shared by several metrics stays one object on the worker.
        return dump(list(metrics)), endpoints
    except Exception:
        pass
    for metric in metrics:  # find the metric that cannot travel, to name it
        try:
            dump(metric)
        except Exception as exc:
            raise UsageError(
                f"metric {getattr(metric, 'name', metric)!r} cannot be sent to Ray workers "
                f"({type(exc).__name__}: {exc}); build its models from model strings "
                "(llm_factory('openai/gpt-4o-mini'), base_url=...) rather than from your own client "
                "objects, and define custom metrics in an importable module"
            ) from None
    raise UsageError("the metrics cannot be sent to Ray workers together (pickling failed)")


def load(payload: bytes) -> list[Any]:
    """The metrics of `ship`, on a worker (after `install_limiters`)."""
    metrics: list[Any] = pickle.loads(payload)
    return metrics


# -- on the worker ----------------------------------------------------------------------------
_LIMITERS: dict[str, Any] = {}  # endpoint key -> its global limiter's actor handle
_LEASE_SIZE = 16
_WORKER_ENDPOINTS: dict[str, Endpoint] = {}
_WORKER_CACHES: dict[tuple[str, bool], ResponseCache] = {}
_GUARD = threading.Lock()


def install_limiters(handles: dict[str, Any], lease_size: int) -> None:
    """Called by a worker before `load`: the limiter actor of each endpoint of this run."""
    global _LEASE_SIZE
    with _GUARD:
        _LIMITERS.clear()
        _LIMITERS.update(handles)
        _LEASE_SIZE = lease_size
        _WORKER_ENDPOINTS.clear()


def _endpoint_on_worker(key: str, limits: Limits) -> Endpoint:
    with _GUARD:
        endpoint = _WORKER_ENDPOINTS.get(key)
        if endpoint is None:
            endpoint = Endpoint(key, limits)
            handle = _LIMITERS.get(key)
            if handle is not None:
                from assay.engine.ray.limits import LeasedRateLimiter

                leased = LeasedRateLimiter(handle, limits, lease_size=_LEASE_SIZE)
                endpoint.limiter = leased  # type: ignore[assignment]  # has RateLimiter's methods
            _WORKER_ENDPOINTS[key] = endpoint
        return endpoint


def _cache_on_worker(path: str, replay_only: bool) -> ResponseCache:
    with _GUARD:
        cache = _WORKER_CACHES.get((path, replay_only))
        if cache is None:
            cache = _WORKER_CACHES[(path, replay_only)] = open_cache(path, replay_only=replay_only)
        return cache


def _new_lock(reentrant: bool) -> Any:
    return threading.RLock() if reentrant else threading.Lock()


__all__ = ["install_limiters", "load", "ship"]
