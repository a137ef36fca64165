"""Which models are used when none is named: ASSAY_LLM / ASSAY_EMBEDDINGS, else the local ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.models import defaults
from assay.models.defaults import default_embeddings, default_llm
from assay.models.local import SERVERS, LocalProvider
from assay.models.local_embeddings import E5Provider, MiniLMProvider
from assay.models.providers.openai_compat import OpenAICompatible
from tests.local.conftest import CTX, PARALLEL, SMOLLM2, THREADS, needs_smollm2


@pytest.fixture(autouse=True)
def fresh_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "_told", set())


def test_assay_llm_names_the_judge_and_no_local_server_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASSAY_LLM", "vllm/x@http://127.0.0.1:9/v1")
    running = SERVERS.running()
    llm = default_llm(cache=False)
    assert isinstance(llm.provider, OpenAICompatible)
    assert not isinstance(llm.provider, LocalProvider)
    assert llm.provider.name == "vllm"
    assert llm.model == "x"
    assert llm.provider.base_url.rstrip("/") == "http://127.0.0.1:9/v1"
    assert SERVERS.running() == running
    assert capsys.readouterr().err == ""


@needs_smollm2
def test_without_configuration_the_local_judge_is_used_and_announced_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], offline_environment: Path
) -> None:
    # ASSAY_LOCAL_MODEL (SmolLM2, set for the whole package) keeps the 1.1 GB judge away; the
    # other knobs come from the environment too, and match the shared server's settings.
    monkeypatch.setenv("ASSAY_LOCAL_THREADS", str(THREADS))
    monkeypatch.setenv("ASSAY_LOCAL_CTX", str(CTX))
    monkeypatch.setenv("ASSAY_LOCAL_PARALLEL", str(PARALLEL))
    llm = default_llm()
    again = default_llm()
    assert isinstance(llm.provider, LocalProvider)
    assert llm.provider.settings.model_path == str(SMOLLM2)
    assert (
        llm.provider.settings.n_threads,
        llm.provider.settings.n_ctx,
        llm.provider.settings.n_parallel,
    ) == (
        THREADS,
        CTX,
        PARALLEL,
    )
    assert llm.limiter.concurrency.ceiling == PARALLEL
    assert again.provider.settings == llm.provider.settings
    # the default response cache lives where ASSAY_CACHE_DIR says, never in the real home
    assert llm.cache is not None and offline_environment in llm.cache.path.parents

    err = capsys.readouterr().err
    assert err.count("assay: no judge model configured") == 1
    assert "ASSAY_LLM" in err

    response = llm.generate(
        "Say hi.", max_tokens=1, allow_truncated=True
    )  # one token, cut off on purpose
    assert response.usage.output_tokens == 1
    assert capsys.readouterr().err == ""  # nothing more on stderr, not even from llama.cpp


def test_without_configuration_local_embeddings_are_used_and_announced_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    english = default_embeddings(cache=False)
    chinese = default_embeddings("zh", cache=False)
    assert isinstance(english.provider, MiniLMProvider)
    assert isinstance(chinese.provider, E5Provider)
    err = capsys.readouterr().err
    assert err.count("assay: no embedding model configured") == 1
    assert "ASSAY_EMBEDDINGS" in err


def test_assay_embeddings_names_the_embedding_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASSAY_EMBEDDINGS", "local/e5")
    assert isinstance(default_embeddings(cache=False).provider, E5Provider)
    assert capsys.readouterr().err == ""
