"""`RagPipeline`: registering the HTTP endpoint of a RAG pipeline that experiments' cohorts name.

A cohort with `rag_pipeline="basic-rag"` (RagMetrics' spelling) has the worker POST each example's
question to the pipeline registered under that name, which answers `{"answer": str, "contexts":
[str, ...]}` (see `assay.platform.server.api.pipelines`). Registering one is a `save()`:

    RagPipeline(name="basic-rag", url="http://127.0.0.1:8000/rag").save()
    Cohort(name="Basic RAG", rag_pipeline="basic-rag")

The server checks the URL (http or https, a host, no credentials: they would be stored in
clear). A name is registered once; saving another pipeline under it is a `Conflict`, and
`RagPipeline.delete(name)` frees it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from assay.platform.sdk.client import current
from assay.platform.sdk.errors import Conflict, ValidationFailed


class RagPipeline:
    """A named RAG pipeline endpoint of this project."""

    _path = "/rag-pipelines"

    def __init__(self, name: str, url: str, timeout_s: float = 60.0) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValidationFailed("RagPipeline: name is required", field="name")
        if not isinstance(url, str) or not url.strip():
            raise ValidationFailed("RagPipeline: url is required", field="url")
        self.name, self.url, self.timeout_s = name, url, timeout_s
        self.id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "timeout_s": self.timeout_s}

    def save(self) -> RagPipeline:
        """Register it. The same name with the same URL and timeout is the stored pipeline; with
        others it is a `Conflict` (delete the old one first)."""
        try:
            data = current().request("POST", self._path, json=self.to_dict())
        except Conflict as exc:
            stored = next((p for p in RagPipeline.list() if p.name == self.name), None)
            if stored is None or stored.to_dict() != self.to_dict():
                raise Conflict(
                    f"a RAG pipeline named {self.name!r} is registered with another URL or "
                    f"timeout; RagPipeline.delete({self.name!r}) first to replace it ({exc})"
                ) from None
            self.id = stored.id
            return self
        self.id = data["id"]
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagPipeline:
        pipeline = cls(data["name"], data["url"], data.get("timeout_s", 60.0))
        pipeline.id = data.get("id")
        return pipeline

    @classmethod
    def list(cls) -> list[RagPipeline]:
        """Every pipeline registered in this project."""
        return [cls.from_dict(item) for item in current().request("GET", cls._path)["items"]]

    @classmethod
    def delete(cls, name: str) -> None:
        """Unregister the pipeline `name` (`NotFound` if there is none)."""
        current().request("DELETE", f"{cls._path}/{quote(name, safe='')}")

    def __repr__(self) -> str:
        return f"RagPipeline(name={self.name!r}, url={self.url!r})"


__all__ = ["RagPipeline"]
