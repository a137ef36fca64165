"""What a provider's batch API is to assay: submit requests, poll, read the answers.

OpenAI's Batch API (`openai_batch.py`) and Anthropic's Message Batches (`anthropic_batch.py`)
answer the same requests as the live endpoints at half the price, within a day. A provider
declares one through its registry entry (`ProviderKind.batch`); `batch_client_for` finds it, or
refuses a provider that has none (llama.cpp, vLLM, Ollama, the embedded judge) in one line.

A `BatchClient` knows nothing of waves, retries or the run directory (that is
`engine/batch/`): it turns `{custom_id: ModelRequest}` into one batch, says how the batch is
doing (`BatchState`, with the provider's own status word and a common `phase`), and reads each
line's answer back as a `ModelResponse` or the `ModelError` a live call would have raised.
Management calls go through `BatchHttp` (httpx): an error status becomes the same error a live
call gets (`status_error`), a failed connection a transient `ModelConnectionError`.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from assay._util.loop_local import LoopLocal
from assay.errors import ModelConnectionError, ModelError, ModelTimeout, ProviderError, UsageError
from assay.models.providers.base import Provider
from assay.models.providers.openai_http import status_error
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price

Phase = Literal["validating", "in_progress", "finalizing", "ended"]
# Batch APIs answer at this share of the live price (OpenAI and Anthropic: half).
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class BatchState:
    """One poll of a batch: the provider's status word, a common phase, and line counts."""

    id: str
    status: str
    phase: Phase
    total: int = 0
    done: int = 0
    failed: int = 0
    raw: Any = None  # the provider's batch object, for reading its results

    @property
    def ended(self) -> bool:
        return self.phase == "ended"


class BatchClient(abc.ABC):
    """One provider endpoint's batch API."""

    discount: float = BATCH_DISCOUNT

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    @abc.abstractmethod
    async def submit(
        self,
        requests: dict[str, ModelRequest],
        uploaded: Callable[[str], None] | None = None,
    ) -> str:
        """Create one batch carrying `requests` under their custom ids; the batch's id.
        `uploaded(upload_id)` is told, where the API uploads the requests before it creates the
        batch, what the upload is, so that `find` can tell later whether a batch was made of it."""

    async def find(self, upload_id: str) -> str | None:
        """The batch made from an upload `submit` reported, if the provider made one (a run
        killed between the two steps never heard its id); None where there is no such step."""
        return None

    @abc.abstractmethod
    async def poll(self, batch_id: str) -> BatchState:
        """How the batch is doing now."""

    @abc.abstractmethod
    async def results(
        self, state: BatchState, requests: dict[str, ModelRequest]
    ) -> dict[str, ModelResponse | ModelError]:
        """Each line's answer or error, by custom id, for an ended batch. A line the batch never
        answered (expired, cancelled) is absent."""

    @abc.abstractmethod
    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to stop the batch (lines already answered stay answered)."""

    def price(self, live: Price | None) -> Price | None:
        """What a token costs through this batch API."""
        if live is None:
            return None
        return Price(
            live.input_per_million * self.discount, live.output_per_million * self.discount
        )


class BatchHttp:
    """Management calls of a batch API over httpx, errors mapped to assay's."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self.headers = headers
        self.timeout = timeout
        # One client per event loop, closed when the loop ends: making a client loads the TLS
        # certificates (a tenth of a second), too dear for every poll.
        # Plain http (a local proxy, a test server) needs no certificates at all.
        tls = not self.base_url.startswith("http://")
        self._clients = LoopLocal(lambda: _Client(timeout, tls))

    async def call(self, method: str, path: str, **kwargs: Any) -> bytes:
        import httpx

        url = path if "://" in path else self.base_url + path.lstrip("/")
        try:
            client = self._clients.get().http
            response = await client.request(method, url, headers=self.headers, **kwargs)
        except httpx.TimeoutException as exc:
            raise ModelTimeout(f"the batch API did not answer {method} {path}: {exc}") from exc
        except httpx.HTTPError as exc:
            raise ModelConnectionError(
                f"could not reach the batch API ({method} {path}): {type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise status_error(response.status_code, response.text, response.headers)
        return response.content

    async def json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        data = await self.call(method, path, **kwargs)
        try:
            payload = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ProviderError(
                f"the batch API's answer to {method} {path} is not JSON: {data[:200]!r}",
                status=None,
            ) from exc
        if not isinstance(payload, dict):
            raise ProviderError(f"the batch API's answer to {method} {path} is not an object")
        return payload


class _Client:
    """An httpx client as `LoopLocal` closes it (`close()`)."""

    def __init__(self, timeout: float, tls: bool) -> None:
        import httpx

        self.http = httpx.AsyncClient(timeout=timeout, verify=tls)

    async def close(self) -> None:
        await self.http.aclose()


def jsonl(data: bytes) -> list[dict[str, Any]]:
    """The objects of a JSONL body; a line that is not a JSON object is skipped (its request is
    then unanswered, and asked again)."""
    lines = []
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            lines.append(item)
    return lines


def has_batch_api(provider: Any) -> bool:
    """Whether the provider's registry entry declares a batch API."""
    return _maker(provider) is not None


def batch_price(price: Price | None) -> Price | None:
    """What a token costs through a batch API, at `BATCH_DISCOUNT` of the live `price`."""
    if price is None:
        return None
    return Price(
        price.input_per_million * BATCH_DISCOUNT, price.output_per_million * BATCH_DISCOUNT
    )


def _maker(provider: Any) -> Any:
    from assay.models.providers.registry import PROVIDER_KINDS

    name = getattr(provider, "name", None)
    if not isinstance(name, str):
        return None
    try:
        kind = PROVIDER_KINDS.find(name)
    except UsageError:  # a name no registry entry could carry
        return None
    return kind.batch if kind is not None else None


def batch_client_for(provider: Provider) -> BatchClient:
    """The batch API of `provider`'s endpoint, or a one-line `UsageError` when it has none."""
    make = _maker(provider)
    if make is None:
        raise UsageError(
            f"batch mode: the judge {provider.name}/{provider.model} has no batch API (batch mode "
            "needs OpenAI's Batch API or Anthropic's Message Batches; llama.cpp, vLLM, Ollama and "
            "the embedded judge answer live only): run without --batch / batch=True"
        )
    client: BatchClient = make(provider)
    return client


__all__ = [
    "BATCH_DISCOUNT",
    "BatchClient",
    "BatchHttp",
    "BatchState",
    "Phase",
    "batch_client_for",
    "batch_price",
    "has_batch_api",
    "jsonl",
]
