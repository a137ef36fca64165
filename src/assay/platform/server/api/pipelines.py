"""Registered RAG pipelines under /api/v1/rag-pipelines: a cohort names one instead of a model,
and the worker POSTs each example's question to it (`pipeline_answer`).

The contract of a pipeline endpoint: `POST {"question": str}` answered with
`{"answer": str, "contexts": [str, ...]}` (`contexts` may be left out). Anything else, a status
other than 2xx, a timeout or a refused connection is stored as the generation's typed error.
"""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import urlsplit

import httpx
from fastapi import APIRouter, Path, Request, Response
from pydantic import AfterValidator, Field
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from assay.platform.server.api.resources import Reader, Writer, page, state_of
from assay.platform.server.errors import ApiError, conflict, invalid
from assay.platform.server.schemas.bodies import Body, Name
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import iso

router = APIRouter(prefix="/api/v1")
MAX_ANSWER_BYTES = 4_000_000  # a pipeline answer larger than this is refused, not stored


def _http_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("must not carry credentials (they would be stored in clear)")
    return url


class PipelineIn(Body):
    name: Name
    url: Annotated[str, Field(max_length=2000), AfterValidator(_http_url)]
    timeout_s: Annotated[float, Field(gt=0, le=600)] = 60.0


def pipeline_json(row: models.RagPipeline) -> dict[str, Any]:
    return {
        "object_type": "rag_pipeline",
        "id": row.id,
        "name": row.name,
        "url": row.url,
        "timeout_s": row.timeout_s,
        "created_at": iso(row.created_at),
    }


def find_pipeline(session: Any, project_id: int, name: str) -> models.RagPipeline | None:
    return session.scalars(
        select(models.RagPipeline).where(
            models.RagPipeline.project_id == project_id, models.RagPipeline.name == name
        )
    ).first()


@router.post("/rag-pipelines", status_code=201)
def register_pipeline(body: PipelineIn, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        if find_pipeline(session, principal.project_id, body.name) is not None:
            raise conflict(f"a RAG pipeline named {body.name!r} exists in this project")
        row = models.RagPipeline(project_id=principal.project_id, **body.model_dump())
        session.add(row)
        try:
            session.flush()
        except IntegrityError:  # registered by a concurrent request in between
            raise conflict(f"a RAG pipeline named {body.name!r} exists in this project") from None
        return pipeline_json(row)


@router.get("/rag-pipelines")
def list_pipelines(request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        rows = session.scalars(
            select(models.RagPipeline)
            .where(models.RagPipeline.project_id == principal.project_id)
            .order_by(models.RagPipeline.name)
        ).all()
        return page([pipeline_json(r) for r in rows], None)


@router.delete("/rag-pipelines/{name}", status_code=204)
def delete_pipeline(
    request: Request, principal: Writer, name: str = Path(min_length=1, max_length=200)
) -> Response:
    with state_of(request).transaction() as session:
        row = find_pipeline(session, principal.project_id, name)
        if row is None:
            raise ApiError(404, "not_found", f"no RAG pipeline named {name!r} in this project")
        session.delete(row)
    return Response(status_code=204)


def check_cohort_pipeline(session: Any, project_id: int, name: str, field: str) -> None:
    """A cohort's `rag_pipeline` must name a registered pipeline (422 on that field otherwise)."""
    if find_pipeline(session, project_id, name) is None:
        raise invalid(
            field,
            f"no RAG pipeline named {name!r} in this project; register it with "
            "POST /api/v1/rag-pipelines {name, url}",
        )


class PipelineError(Exception):
    """A pipeline call that gave no usable answer (stored as the generation's error)."""


async def pipeline_answer(
    client: httpx.AsyncClient, url: str, question: str, timeout_s: float
) -> tuple[str, list[str], dict[str, Any]]:
    """(answer, contexts, raw answer) from the pipeline at `url`; PipelineError otherwise."""
    try:
        response = await client.post(url, json={"question": question}, timeout=timeout_s)
    except httpx.TimeoutException as exc:
        raise PipelineError(f"the pipeline did not answer within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise PipelineError(f"could not reach the pipeline: {type(exc).__name__}: {exc}") from exc
    if not response.is_success:
        raise PipelineError(
            f"the pipeline answered HTTP {response.status_code}: {response.text[:300]}"
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


__all__ = ["PipelineError", "check_cohort_pipeline", "find_pipeline", "pipeline_answer", "router"]
