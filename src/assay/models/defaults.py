"""Which models to use when the caller named none.

No implicit remote provider, ever: without an argument, `ASSAY_LLM` / `ASSAY_EMBEDDINGS` name
the models (any model string, e.g. `openai/gpt-4o-mini`); without those, the embedded offline
judge and local embeddings are used, and the user is told so once per process.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from assay.models.embeddings import Embeddings
from assay.models.factory import embedding_factory, llm_factory
from assay.models.llm import LLM

_told: set[str] = set()


def _tell_once(kind: str, message: str) -> None:
    if kind not in _told:
        _told.add(kind)
        print(message, file=sys.stderr)


def default_llm(**options: Any) -> LLM:
    configured = os.environ.get("ASSAY_LLM")
    if configured:
        return llm_factory(configured, **options)
    llm = llm_factory("local", **options)
    model = "Qwen2.5-Coder-1.5B-Instruct" if not os.environ.get("ASSAY_LOCAL_MODEL") else llm.model
    _tell_once(
        "llm",
        f"assay: no judge model configured, using the embedded offline judge ({model}, llama.cpp, CPU). "
        "To use another, pass llm=llm_factory('openai/gpt-4o-mini'), --llm MODEL, or set ASSAY_LLM.",
    )
    return llm


def default_embeddings(language: str | None = None, **options: Any) -> Embeddings:
    configured = os.environ.get("ASSAY_EMBEDDINGS")
    if configured:
        return embedding_factory(configured, **options)
    english = language is None or language.lower() in ("en", "english")
    model = "local/minilm" if english else "local/e5"
    _tell_once(
        "embeddings",
        f"assay: no embedding model configured, using local {model.split('/')[1]} embeddings. "
        "To use another, pass embeddings=..., --embeddings MODEL, or set ASSAY_EMBEDDINGS.",
    )
    return embedding_factory(model, **options)


__all__ = ["default_embeddings", "default_llm"]
