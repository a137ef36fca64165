"""Local GGUF judges on Ray: one judge actor per node, its llama.cpp slots the node's capacity.

A judge built with `llm_factory("local", ...)` runs llama.cpp inside the process that calls it
(`models/local.py`). On Ray that would be one copy of the weights per worker, each fighting the
others for the node's cores. Instead, for each local model of the run the driver starts one
`LocalJudge` actor per node that has CPUs, pinned there: it loads the model (the same embedded
server, on a free 127.0.0.1 port) and is also the rate limiter of that endpoint *for that node*
(the `EndpointLimiter` of `ray/limits.py` with the judge's own `Limits`: `max_concurrency` is its
`n_parallel` slots). Workers on the node get:

- the node's judge as the limiter of the local endpoint, leased from exactly like the limiter of a
  remote endpoint, so all the node's workers together keep at most `n_parallel` calls in flight;
- in place of the in-process provider, a `NodeJudgeProvider`: the same OpenAI-compatible provider
  pointed at the judge's loopback address, which it asks the actor for (and asks again after a
  lost connection, when the actor may have restarted on another port).

Cache keys and outcomes are those of a local run: the provider's identity is the model file's.
The model file must be at the same path on every node.
"""

from __future__ import annotations

import json
import os
from typing import Any

from assay.engine.ray.cluster import wait_for_start
from assay.engine.ray.limits import EndpointLimiter
from assay.errors import ModelConnectionError, UsageError
from assay.models.limits import Limits
from assay.models.local import LocalProvider, ServerSettings
from assay.models.types import ModelRequest, ModelResponse


def local_settings(endpoint_key: str) -> ServerSettings | None:
    """The server settings of a local judge's endpoint key (None for any other endpoint)."""
    address = json.loads(endpoint_key).get("address", {})
    if address.get("provider") != "local" or not isinstance(address.get("settings"), dict):
        return None
    return ServerSettings(**address["settings"])


class LocalJudge(EndpointLimiter):
    """The body of a node's judge actor: the llama.cpp server, and the limiter of its slots."""

    def __init__(self, settings: ServerSettings, limits: Limits) -> None:
        from assay.models.local import SERVERS

        super().__init__(limits)
        self.settings = settings
        if not os.path.isfile(settings.model_path):
            raise UsageError(f"local model file not found on this node: {settings.model_path}")
        self.url = SERVERS.address(settings)  # loads the weights: seconds, before any call

    async def where(self) -> dict[str, Any]:
        import ray

        return {
            "url": self.url,
            "node": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
        }


def start_judges(
    ray: Any, endpoints: dict[str, Limits], timeout: float
) -> dict[str, dict[str, Any]]:
    """One judge actor per node with CPUs for each local endpoint: {node id: {key: handle}}."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    local = {key: local_settings(key) for key in endpoints}
    local = {key: settings for key, settings in local.items() if settings is not None}
    if not local:
        return {}
    nodes = [
        node["NodeID"]
        for node in ray.nodes()
        if node.get("Alive") and float(node.get("Resources", {}).get("CPU", 0)) > 0
    ]
    judge_class = ray.remote(LocalJudge)
    judges: dict[str, dict[str, Any]] = {}
    for node in nodes:
        for key, settings in local.items():
            judges.setdefault(node, {})[key] = judge_class.options(
                num_cpus=0,  # llama.cpp's threads are its own setting (n_threads)
                max_restarts=-1,
                max_task_retries=-1,
                max_concurrency=10_000,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
            ).remote(settings, endpoints[key])
    handles = [handle for by_key in judges.values() for handle in by_key.values()]
    wait_for_start(
        ray,
        [handle.where.remote() for handle in handles],
        timeout,
        timed_out=lambda: (
            f"the local judges did not load their model within {timeout:g} s "
            "(RayExecutor start_timeout)"
        ),
        failed="a local judge could not start",
    )
    return judges


# -- on the worker --------------------------------------------------------------------------
_JUDGES: dict[ServerSettings, Any] = {}  # this node's judge actor, by model and settings


def install_judges(handles: dict[str, Any]) -> None:
    """Called by a worker before loading the metrics: its node's judges, by endpoint key."""
    _JUDGES.clear()
    for key, handle in handles.items():
        settings = local_settings(key)
        if settings is not None:
            _JUDGES[settings] = handle


class NodeJudgeProvider(LocalProvider):
    """The local provider of a worker: calls its node's judge actor's server, never its own."""

    async def _ensure_started(self) -> None:
        if self._clients is not None:
            return
        handle = _JUDGES.get(self.settings)
        if handle is None:
            raise UsageError(
                f"no local judge for {self.model} on this Ray node (a worker placed after the "
                "judges started?)"
            )
        import openai

        from assay._util.loop_local import LoopLocal

        found = await handle.where.remote()
        base_url = self.base_url = f"{found['url']}/v1"
        self._clients = LoopLocal(
            lambda: openai.AsyncOpenAI(
                base_url=base_url, api_key="local", timeout=self.timeout, max_retries=0
            )
        )

    def start(self) -> str:
        raise UsageError("a Ray worker's local judge is started by its node's judge actor")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            return await super().complete(request)
        except ModelConnectionError:
            self._clients = None  # the actor may have restarted elsewhere: ask it again next time
            raise


def provider_on_worker(settings: ServerSettings, timeout: float) -> NodeJudgeProvider:
    return NodeJudgeProvider(settings, timeout=timeout)


__all__ = ["LocalJudge", "NodeJudgeProvider", "install_judges", "local_settings", "start_judges"]
