"""Runner details that need no model."""

from __future__ import annotations

from types import SimpleNamespace

from assay.benchmark.runner import fit_concurrency


def test_concurrency_is_capped_at_the_local_judges_slots():
    local = SimpleNamespace(llm=SimpleNamespace(provider=SimpleNamespace(name="local",
                                                                         settings=SimpleNamespace(n_parallel=2))))
    remote = SimpleNamespace(llm=SimpleNamespace(provider=SimpleNamespace(name="openai")))
    assert fit_concurrency(local, 8) == 2
    assert fit_concurrency(local, 1) == 1
    assert fit_concurrency(remote, 8) == 8
    assert fit_concurrency(SimpleNamespace(), 8) == 8  # a metric without a judge
