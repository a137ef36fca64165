"""Registered RAG pipelines under /api/v1/rag-pipelines: a cohort names one instead of a model,
and the worker POSTs each example's question to it (`jobs.pipeline_client.pipeline_answer`).

The contract of a pipeline endpoint: `POST {"question": str}` answered with
`{"answer": str, "contexts": [str, ...]}` (`contexts` may be left out). Anything else, a status
other than 2xx, a timeout or a refused connection is stored as the generation's typed error.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Path, Request, Response
from pydantic import AfterValidator, Field

from assay.platform.server.api.deps import Reader, Writer, page, state_of
from assay.platform.server.schemas.bodies import Body, Name
from assay.platform.server.storage import models
from assay.platform.server.storage.pipelines import PipelineRepo
from assay.platform.server.storage.repos import iso

router = APIRouter(prefix="/api/v1")


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


@router.post("/rag-pipelines", status_code=201)
def register_pipeline(body: PipelineIn, request: Request, principal: Writer) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        return pipeline_json(PipelineRepo(session, principal.project_id).add(**body.model_dump()))


@router.get("/rag-pipelines")
def list_pipelines(request: Request, principal: Reader) -> dict[str, Any]:
    with state_of(request).transaction() as session:
        rows = PipelineRepo(session, principal.project_id).all()
        return page([pipeline_json(r) for r in rows], None)


@router.delete("/rag-pipelines/{name}", status_code=204)
def delete_pipeline(
    request: Request, principal: Writer, name: str = Path(min_length=1, max_length=200)
) -> Response:
    with state_of(request).transaction() as session:
        PipelineRepo(session, principal.project_id).delete(name)
    return Response(status_code=204)


__all__ = ["PipelineIn", "pipeline_json", "router"]
