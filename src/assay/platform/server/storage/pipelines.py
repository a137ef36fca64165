"""The project's registered RAG pipelines (`PipelineRepo`), unique by name within a project."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.platform.server.errors import ApiError, conflict, invalid
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import ProjectScoped

P = models.RagPipeline


class PipelineRepo(ProjectScoped):
    def by_name(self, name: str) -> models.RagPipeline | None:
        return self.session.scalars(self._select(P).where(P.name == name)).first()

    def all(self) -> list[models.RagPipeline]:
        return list(self.session.scalars(self._select(P).order_by(P.name)))

    def add(self, **values: Any) -> models.RagPipeline:
        """Register a pipeline; 409 when the name is taken (also by a concurrent request)."""
        name = values["name"]
        if self.by_name(name) is not None:
            raise conflict(f"a RAG pipeline named {name!r} exists in this project")
        row = P(project_id=self.project_id, **values)
        self.session.add(row)
        try:
            self.session.flush()
        except IntegrityError:  # registered by a concurrent request in between
            raise conflict(f"a RAG pipeline named {name!r} exists in this project") from None
        return row

    def delete(self, name: str) -> None:
        row = self.by_name(name)
        if row is None:
            raise ApiError(404, "not_found", f"no RAG pipeline named {name!r} in this project")
        self.session.delete(row)

    def check_cohort(self, name: str, field: str) -> None:
        """A cohort's `rag_pipeline` must name a registered pipeline (422 on `field` otherwise)."""
        if self.by_name(name) is None:
            raise invalid(
                field,
                f"no RAG pipeline named {name!r} in this project; register it with "
                "POST /api/v1/rag-pipelines {name, url}",
            )


__all__ = ["PipelineRepo"]
