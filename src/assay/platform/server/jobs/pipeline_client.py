"""Calling a registered RAG pipeline (`pipeline_answer`): `POST {"question": str}` answered with
`{"answer": str, "contexts": [str, ...]}`; anything else is a `PipelineError`, stored as the
generation's typed error. The worker calls it; the registry of pipelines is `storage.pipelines`."""

from __future__ import annotations

import json
from typing import Any

import httpx

MAX_ANSWER_BYTES = 4_000_000  # a pipeline answer larger than this is refused, not stored


class PipelineError(Exception):
    """A pipeline call that gave no usable answer (stored as the generation's error).
    `unreachable`: no answer at all (refused, cut, timed out, a 5xx), what counts towards the
    pipeline being down for the run (`calls.Gate`)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


async def pipeline_answer(
    client: httpx.AsyncClient, url: str, question: str, timeout_s: float
) -> tuple[str, list[str], dict[str, Any]]:
    """(answer, contexts, raw answer) from the pipeline at `url`; PipelineError otherwise."""
    try:
        response = await client.post(url, json={"question": question}, timeout=timeout_s)
    except httpx.TimeoutException as exc:
        raise PipelineError(
            f"the pipeline did not answer within {timeout_s:g} s", unreachable=True
        ) from exc
    except httpx.HTTPError as exc:
        raise PipelineError(
            f"could not reach the pipeline: {type(exc).__name__}: {exc}", unreachable=True
        ) from exc
    if not response.is_success:
        raise PipelineError(
            f"the pipeline answered HTTP {response.status_code}: {response.text[:300]}",
            unreachable=response.status_code >= 500,
        )
    if len(response.content) > MAX_ANSWER_BYTES:
        raise PipelineError(f"the pipeline's answer is over {MAX_ANSWER_BYTES:,} bytes")
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PipelineError(f"the pipeline's answer is not JSON: {response.text[:200]!r}") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("answer"), str):
        raise PipelineError(
            'the pipeline must answer {"answer": str, "contexts": [str]}, got '
            f"{json.dumps(payload)[:200]}"
        )
    contexts = payload.get("contexts", [])
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise PipelineError('the pipeline\'s "contexts" must be a list of strings')
    return payload["answer"], contexts, payload


__all__ = ["MAX_ANSWER_BYTES", "PipelineError", "pipeline_answer"]
