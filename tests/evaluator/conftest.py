"""Guards for the evaluator tests: no test may build a default model (the 1.1 GB offline judge or
the local embeddings), and the evaluator's log is switched on so tests can read what it says."""

from __future__ import annotations

from typing import Any

import pytest

import assay.engine.run
import assay.models.defaults


def _forbidden(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a test reached a default model: pass llm=/embeddings= explicitly")


@pytest.fixture(autouse=True)
def no_default_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (assay.models.defaults, assay.engine.run):
        monkeypatch.setattr(module, "default_llm", _forbidden)
        monkeypatch.setattr(module, "default_embeddings", _forbidden)
    monkeypatch.delenv("ASSAY_LLM", raising=False)
    monkeypatch.delenv("ASSAY_EMBEDDINGS", raising=False)


@pytest.fixture(autouse=True)
def evaluator_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_DISABLE_LOGGING", "0")
