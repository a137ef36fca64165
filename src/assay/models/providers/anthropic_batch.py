"""Anthropic's Message Batches for the Anthropic provider.

    POST /v1/messages/batches          {"requests": [{"custom_id", "params": <Messages arguments>}]}
    GET  /v1/messages/batches/{id}     processing_status: in_progress, canceling, ended;
                                       request_counts (processing, succeeded, errored, canceled,
                                       expired); results_url once ended
    GET  <results_url>                 JSONL: {"custom_id", "result": {"type": "succeeded",
                                       "message"} | {"type": "errored", "error"} |
                                       {"type": "canceled"} | {"type": "expired"}}
    POST /v1/messages/batches/{id}/cancel

Each line's params are the live provider's (`AnthropicProvider.message_arguments`) and each answer
is read by its reader (`read_message`). The Messages API has no `n`, so a request for n answers
is n lines (`<custom id>-<i>`), put back together here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assay.errors import ModelError, ProviderError, RateLimited
from assay.models.providers.anthropic import AnthropicProvider, read_message
from assay.models.providers.batch_api import BatchClient, BatchHttp, BatchState, Phase, jsonl
from assay.models.types import ModelRequest, ModelResponse, Usage

ANTHROPIC_VERSION = "2023-06-01"
_PHASES: dict[str, Phase] = {"in_progress": "in_progress", "canceling": "finalizing"}
# Anthropic's error types as the HTTP statuses a live call would have met.
_STATUSES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatches(BatchClient):
    """Message Batches at the provider's base URL, with its key."""

    provider: AnthropicProvider

    def __init__(self, provider: AnthropicProvider) -> None:
        super().__init__(provider)
        self._http: BatchHttp | None = None

    @property
    def http(self) -> BatchHttp:
        """Made on first use, inside the run's loop (the provider's SDK client is per loop)."""
        if self._http is None:
            client = self.provider.client
            base = str(getattr(client, "base_url", "") or "https://api.anthropic.com")
            headers = {"anthropic-version": ANTHROPIC_VERSION}
            key = getattr(client, "api_key", None)
            if isinstance(key, str) and key:
                headers["x-api-key"] = key
            self._http = BatchHttp(base.rstrip("/") + "/v1/", headers)
        return self._http

    async def submit(
        self,
        requests: dict[str, ModelRequest],
        uploaded: Callable[[str], None] | None = None,
    ) -> str:
        lines = [
            {"custom_id": f"{custom_id}-{i}", "params": self.provider.message_arguments(request)}
            for custom_id, request in requests.items()
            for i in range(request.n)
        ]
        created = await self.http.json("POST", "messages/batches", json={"requests": lines})
        return str(created["id"])

    async def poll(self, batch_id: str) -> BatchState:
        batch = await self.http.json("GET", f"messages/batches/{batch_id}")
        status = str(batch.get("processing_status") or "")
        counts = {k: int(v or 0) for k, v in (batch.get("request_counts") or {}).items()}
        return BatchState(
            id=batch_id,
            status=status,
            phase=_PHASES.get(status, "ended"),
            total=sum(counts.values()),
            done=counts.get("succeeded", 0),
            failed=counts.get("errored", 0) + counts.get("expired", 0) + counts.get("canceled", 0),
            raw=batch,
        )

    async def results(
        self, state: BatchState, requests: dict[str, ModelRequest]
    ) -> dict[str, ModelResponse | ModelError]:
        url = (state.raw or {}).get("results_url") or f"messages/batches/{state.id}/results"
        lines: dict[str, dict[str, Any]] = {}
        for item in jsonl(await self.http.call("GET", str(url))):
            custom_id = str(item.get("custom_id") or "")
            lines[custom_id] = item.get("result") or {}
        found: dict[str, ModelResponse | ModelError] = {}
        for custom_id, request in requests.items():
            parts = [lines.get(f"{custom_id}-{i}") for i in range(request.n)]
            answer = _joined(parts, request, self.provider.model)
            if answer is not None:
                found[custom_id] = answer
        return found

    async def cancel(self, batch_id: str) -> None:
        await self.http.call("POST", f"messages/batches/{batch_id}/cancel")


def _joined(
    parts: list[dict[str, Any] | None], request: ModelRequest, model: str
) -> ModelResponse | ModelError | None:
    """One request's answer from its lines: the first error, else None if a line was never
    answered, else the generations together."""
    generations, usage = [], Usage()
    for part in parts:
        kind = (part or {}).get("type")
        if kind == "errored":
            return _error(part or {})
        if kind != "succeeded":
            return None  # canceled, expired or missing: asked again
        from anthropic.types import Message  # the live provider's reader takes the SDK's type

        try:
            message = Message.model_validate((part or {}).get("message"))
        except ValueError as exc:
            return ProviderError(f"a batch answer is not a message: {exc}", status=None)
        generation, used = read_message(message, request)
        generations.append(generation)
        usage = usage + used
    return ModelResponse(generations=generations, usage=usage, model=model)


def _error(result: dict[str, Any]) -> ModelError:
    outer = result.get("error") or {}
    nested = outer.get("error")
    inner = nested if isinstance(nested, dict) else outer
    kind = str(inner.get("type") or "")
    body = json.dumps(outer)
    message = f"the batch line failed: {kind or 'error'}: {inner.get('message') or ''}"
    status = _STATUSES.get(kind)
    if status == 429 or status == 529:
        return RateLimited(message, status=status, body=body)
    return ProviderError(message, status=status, body=body)


__all__ = ["ANTHROPIC_VERSION", "AnthropicBatches"]
