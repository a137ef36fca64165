"""`ModelChoice`: which judge and embedding model a run uses, named the way a command line names them.

`assay evaluate`, `assay benchmark` and `assay align` all take `--llm`, `--base-url`,
`--embeddings` and `--no-cache`, and each turned those strings into models in its own way. The
library functions behind them (`assay.engine.file_run`, `assay.benchmark.measure`,
`assay.alignment.fit`) take one `ModelChoice` instead, so the rule lives here once: a model string is
built with `llm_factory` / `embedding_factory` (with the choice's base URL, cache and request
timeout), a model object is used as given, and nothing named means the configured default, built
only when something needs it. Building happens before any work, so a missing credential is reported
before the first row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.engine.models import coerce_embeddings, coerce_llm


@dataclass(frozen=True)
class ModelChoice:
    """llm / embeddings: a model string ("openai/gpt-4o-mini", "local") or a model object
    (`llm_factory(...)`, a LangChain model); None: the default (ASSAY_LLM / ASSAY_EMBEDDINGS, else
    the embedded offline models) where one is needed.
    base_url: the endpoint of an OpenAI-compatible server, for model strings.
    cache: read and write the response cache (for models built here).
    request_timeout: seconds allowed per model request, whole answer included (None: the
        factory's default, 120 s; 900 s for the embedded judge)."""

    llm: Any = None
    embeddings: Any = None
    base_url: str | None = None
    cache: bool = True
    request_timeout: float | None = None

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"cache": self.cache}
        if self.request_timeout is not None:
            options["timeout"] = self.request_timeout
        return options

    def named_llm(self) -> Any:
        """The judge this choice names, built; None when it names none."""
        if isinstance(self.llm, str):
            from assay.models import factory  # looked up at call time, so tests can stand in

            return factory.llm_factory(self.llm, base_url=self.base_url, **self._options())
        return coerce_llm(self.llm)

    def named_embeddings(self) -> Any:
        """The embedding model this choice names, built; None when it names none."""
        if isinstance(self.embeddings, str):
            from assay.models import factory

            return factory.embedding_factory(
                self.embeddings, base_url=self.base_url, **self._options()
            )
        return coerce_embeddings(self.embeddings)

    def llm_for(self, needed: bool) -> Any:
        """The named judge; else, when `needed`, the default one; else None."""
        if self.llm is not None:
            return self.named_llm()
        if not needed:
            return None
        from assay.models import defaults

        return defaults.default_llm(**self._options())

    def embeddings_for(self, needed: bool) -> Any:
        """The named embedding model; else, when `needed`, the default one; else None."""
        if self.embeddings is not None:
            return self.named_embeddings()
        if not needed:
            return None
        from assay.models import defaults

        return defaults.default_embeddings(**self._options())


__all__ = ["ModelChoice"]
