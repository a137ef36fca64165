"""OpenAI's Batch API for an OpenAI(-compatible) provider: one JSONL file, one batch, two files back.

    POST /v1/files            (purpose=batch) the requests, one JSON line each:
                              {"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}
    POST /v1/batches          {"input_file_id", "endpoint", "completion_window": "24h"}
    GET  /v1/batches/{id}     status: validating, in_progress, finalizing, completed, failed,
                              expired, cancelling, cancelled; request_counts; output/error file ids
    GET  /v1/files/{id}/content   the output file (answers) and the error file (failed lines)
    POST /v1/batches/{id}/cancel

Each line's body is the one the live provider sends (`OpenAICompatible._arguments`, `wire_body`),
and each answer is read by the live provider's reader, so a batched answer is the same
`ModelResponse` as a live one. A line answered with an error status gets the error a live call
with that status gets; a line the batch never reached (expired, cancelled) is left out, to be
asked again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from assay.errors import ModelError, ProviderError
from assay.models.providers.batch_api import BatchClient, BatchHttp, BatchState, Phase, jsonl
from assay.models.providers.openai_compat import OpenAICompatible
from assay.models.providers.openai_http import status_error
from assay.models.providers.openai_wire import wire_body
from assay.models.types import ModelRequest, ModelResponse

CHAT_ENDPOINT = "/v1/chat/completions"
_PHASES: dict[str, Phase] = {
    "validating": "validating",
    "in_progress": "in_progress",
    "finalizing": "finalizing",
    "cancelling": "finalizing",
}


class OpenAIBatches(BatchClient):
    """The Batch API at the provider's own base URL, with its key."""

    provider: OpenAICompatible

    def __init__(self, provider: OpenAICompatible) -> None:
        super().__init__(provider)
        key = provider.api_key if provider.api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if isinstance(key, str) and key else {}
        self.http = BatchHttp(provider.base_url, headers, timeout=provider.timeout)

    def line(self, custom_id: str, request: ModelRequest) -> dict[str, Any]:
        body = wire_body(self.provider._arguments(request))
        return {"custom_id": custom_id, "method": "POST", "url": CHAT_ENDPOINT, "body": body}

    async def submit(
        self,
        requests: dict[str, ModelRequest],
        uploaded: Callable[[str], None] | None = None,
    ) -> str:
        text = "".join(
            json.dumps(self.line(custom_id, request), ensure_ascii=False) + "\n"
            for custom_id, request in requests.items()
        )
        uploaded_file = await self.http.json(
            "POST",
            "files",
            data={"purpose": "batch"},
            files={"file": ("assay-batch.jsonl", text.encode("utf-8"), "application/jsonl")},
        )
        if uploaded is not None:
            uploaded(str(uploaded_file["id"]))
        created = await self.http.json(
            "POST",
            "batches",
            json={
                "input_file_id": uploaded_file["id"],
                "endpoint": CHAT_ENDPOINT,
                "completion_window": "24h",
                "metadata": {"made_by": "assay"},
            },
        )
        return str(created["id"])

    async def find(self, upload_id: str) -> str | None:
        listed = await self.http.json("GET", "batches", params={"limit": 100})
        for batch in listed.get("data") or ():  # newest first
            if batch.get("input_file_id") == upload_id:
                return str(batch["id"])
        return None

    async def poll(self, batch_id: str) -> BatchState:
        batch = await self.http.json("GET", f"batches/{batch_id}")
        status = str(batch.get("status") or "")
        counts = batch.get("request_counts") or {}
        return BatchState(
            id=batch_id,
            status=status,
            phase=_PHASES.get(status, "ended"),
            total=int(counts.get("total") or 0),
            done=int(counts.get("completed") or 0),
            failed=int(counts.get("failed") or 0),
            raw=batch,
        )

    async def results(
        self, state: BatchState, requests: dict[str, ModelRequest]
    ) -> dict[str, ModelResponse | ModelError]:
        batch = state.raw or {}
        found: dict[str, ModelResponse | ModelError] = {}
        if state.status == "failed":  # the file was refused as a whole: every line says why
            errors = (batch.get("errors") or {}).get("data") or []
            why = "; ".join(str(e.get("message") or e.get("code")) for e in errors) or "no reason"
            for custom_id in requests:
                found[custom_id] = ProviderError(
                    f"the batch {state.id} failed validation: {why}", status=400, body=why
                )
            return found
        for file_key in ("output_file_id", "error_file_id"):
            file_id = batch.get(file_key)
            if not file_id:
                continue
            for item in jsonl(await self.http.call("GET", f"files/{file_id}/content")):
                line_id = str(item.get("custom_id"))
                if line_id in requests:
                    answer = self._answer(item, requests[line_id])
                    if answer is not None:
                        found[line_id] = answer
        return found

    def _answer(
        self, item: dict[str, Any], request: ModelRequest
    ) -> ModelResponse | ModelError | None:
        response = item.get("response") or {}
        status = response.get("status_code")
        if status == 200:
            try:
                response_model: ModelResponse = self.provider._response(
                    response.get("body"), request
                )
            except ModelError as exc:
                return exc
            return response_model
        if isinstance(status, int):
            return status_error(status, json.dumps(response.get("body")), {})
        error = item.get("error") or {}
        code = str(error.get("code") or "")
        if code in ("batch_expired", "batch_cancelled"):
            return None  # never reached: asked again
        # A line the batch could not run (no status of its own): worth asking again.
        return ProviderError(
            f"the batch line failed: {code or 'error'}: {error.get('message') or ''}",
            status=None,
            body=json.dumps(error),
        )

    async def cancel(self, batch_id: str) -> None:
        await self.http.call("POST", f"batches/{batch_id}/cancel")


__all__ = ["CHAT_ENDPOINT", "OpenAIBatches"]
