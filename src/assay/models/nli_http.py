"""An NLI / hallucination classifier behind HTTP, for `FaithfulnesswithHHEM` (see
`assay.models.nli_classifier` for the local ONNX one and the protocol both follow).

- `protocol="scores"`: POST `{"pairs": [{"premise", "hypothesis"}]}`, answer `{"scores": [p, ...]}`.
- `protocol="tei"`: Hugging Face text-embeddings-inference's `/predict`,
  `{"inputs": [[premise, hypothesis], ...]}`, answered with `{"label", "score"}` lists per pair.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from assay.errors import (
    MalformedResponse,
    ModelConnectionError,
    ModelError,
    ModelTimeout,
    ProviderError,
    RateLimited,
    UsageError,
)
from assay.models.nli_classifier import CONSISTENT_LABELS


class HttpNLIClassifier:
    """A classifier behind HTTP. Transient failures (connection, timeout, 5xx, 429) are tried
    `attempts` times in all; what remains becomes the typed model error of the cell."""

    def __init__(
        self,
        url: str,
        *,
        protocol: Literal["scores", "tei"] = "scores",
        consistent_label: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60.0,
        attempts: int = 3,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"classifier url must start with http:// or https://, got {url!r}")
        if protocol not in ("scores", "tei"):
            raise UsageError(f"protocol must be 'scores' or 'tei', got {protocol!r}")
        self.url = url
        self.protocol = protocol
        self.consistent_label = consistent_label
        self._headers = dict(headers or {})  # may hold a key: never part of identity()
        self.timeout = timeout
        self.attempts = max(1, attempts)

    def identity(self) -> dict[str, Any]:
        return {"kind": "http", "url": self.url, "protocol": self.protocol}

    def _body(self, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
        if self.protocol == "tei":
            return {"inputs": [[p, h] for p, h in pairs], "raw_scores": False}
        return {"pairs": [{"premise": p, "hypothesis": h} for p, h in pairs]}

    def _read(self, payload: Any, rows: int) -> list[float]:
        if self.protocol == "scores":
            scores = payload.get("scores") if isinstance(payload, dict) else None
        else:
            scores = (
                [self._tei_score(item) for item in payload] if isinstance(payload, list) else None
            )
        if not isinstance(scores, list) or len(scores) != rows:
            raise MalformedResponse(
                f"{self.url}: expected {rows} scores, got {json.dumps(payload)[:200]}"
            )
        if not all(isinstance(s, (int, float)) and 0.0 <= s <= 1.0 for s in scores):
            raise MalformedResponse(f"{self.url}: scores must be probabilities in [0, 1]: {scores}")
        return [float(s) for s in scores]

    def _tei_score(self, item: Any) -> Any:
        labels = {
            str(entry.get("label", "")).lower(): entry.get("score")
            for entry in (item if isinstance(item, list) else [item])
            if isinstance(entry, dict)
        }
        wanted = [self.consistent_label.lower()] if self.consistent_label else CONSISTENT_LABELS
        for label in wanted:
            if label in labels:
                return labels[label]
        raise MalformedResponse(f"{self.url}: no label among {list(wanted)} in {labels}")

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> Any:
        try:
            reply = await client.post(self.url, json=body, headers=self._headers)
        except httpx.TimeoutException as exc:
            raise ModelTimeout(f"{self.url}: no answer within {self.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise ModelConnectionError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if reply.status_code == 429:
            raise RateLimited(
                f"{self.url} answered 429: {reply.text[:200]}", body=reply.text[:2000]
            )
        if reply.status_code >= 400:
            raise ProviderError(
                f"{self.url} answered {reply.status_code}: {reply.text[:200]}",
                status=reply.status_code,
                body=reply.text[:2000],
            )
        try:
            return reply.json()
        except ValueError as exc:
            raise MalformedResponse(
                f"{self.url}: the body is not JSON: {reply.text[:200]}"
            ) from exc

    async def _batch(
        self, client: httpx.AsyncClient, pairs: Sequence[tuple[str, str]]
    ) -> list[float]:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=0.2, max=5),
            retry=retry_if_exception(lambda exc: bool(getattr(exc, "transient", False))),
            reraise=True,
        )
        attempt_number = 0
        try:
            async for attempt in retrying:
                with attempt:
                    attempt_number = attempt.retry_state.attempt_number
                    return self._read(await self._post(client, self._body(pairs)), len(pairs))
        except ModelError as exc:
            exc.attempts = attempt_number
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def consistency(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 10
    ) -> list[float]:
        scores: list[float] = []
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            for start in range(0, len(pairs), batch_size):
                scores.extend(await self._batch(client, pairs[start : start + batch_size]))
        return scores


__all__ = ["HttpNLIClassifier"]
