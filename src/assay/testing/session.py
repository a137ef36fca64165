"""The pytest plugin's session: the judge, cache and budget it hands to tests, and what each test
spent. Built the first time a test uses assay (a fixture or the marker), never before: a session
that does not use assay imports none of this.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.testing.budget import BudgetedProvider, SharedBudget
from assay.testing.cache import RepeatCache


@dataclass(frozen=True)
class Spent:
    calls: int = 0  # requests that reached the provider
    cache_hits: int = 0
    cost: float = 0.0
    misses: int = 0  # replay-cache misses

    def __sub__(self, other: Spent) -> Spent:
        return Spent(
            self.calls - other.calls,
            self.cache_hits - other.cache_hits,
            self.cost - other.cost,
            self.misses - other.misses,
        )


class PluginSession:
    def __init__(
        self,
        *,
        cache_mode: str,
        cache_path: Path,
        judge_model: str | None,
        embeddings_model: str | None,
        budget_path: Path | None,
        max_calls: int | None,
        max_usd: float | None,
        baseline_path: Path | None,
    ) -> None:
        self.cache_mode = cache_mode
        self.cache_path = cache_path
        self.judge_model = judge_model
        self.embeddings_model = embeddings_model
        self.budget_path = budget_path
        self.max_calls = max_calls
        self.max_usd = max_usd
        self.baseline_path = baseline_path
        self._cache: RepeatCache | None = None
        self._budget: SharedBudget | None = None
        self._judge: Any = None
        self._embeddings: Any = None
        self._baseline: dict[str, Any] | None = None

    # -- what the fixtures hand out ---------------------------------------------------------
    @property
    def cache(self) -> RepeatCache | None:
        if self.cache_mode == "off":
            return None
        if self._cache is None:
            self._cache = RepeatCache(self.cache_path, replay_only=self.cache_mode == "replay")
        return self._cache

    @property
    def budget(self) -> SharedBudget | None:
        if self.budget_path is None:
            return None
        if self._budget is None:
            self._budget = SharedBudget(
                self.budget_path, max_calls=self.max_calls, max_usd=self.max_usd
            )
        return self._budget

    @property
    def judge(self) -> Any:
        if self._judge is None:
            from assay.models import llm_factory
            from assay.models.defaults import default_llm

            cache = self.cache if self.cache is not None else False
            model = self.judge_model or os.environ.get("ASSAY_LLM")
            llm = llm_factory(model, cache=cache) if model else default_llm(cache=cache)
            if self.budget is not None:
                llm.provider = BudgetedProvider(llm.provider, self.budget, llm.price)
            self._judge = llm
        return self._judge

    @property
    def judge_started(self) -> bool:
        return self._judge is not None

    @property
    def embeddings(self) -> Any:
        """The session's embeddings, or None when none is configured (then `evaluate` picks)."""
        if self._embeddings is None:
            model = self.embeddings_model or os.environ.get("ASSAY_EMBEDDINGS")
            if not model:
                return None
            from assay.models import embedding_factory

            embeddings = embedding_factory(
                model, cache=self.cache if self.cache is not None else False
            )
            if self.budget is not None:
                embeddings.provider = BudgetedProvider(embeddings.provider, self.budget, None)
            self._embeddings = embeddings
        return self._embeddings

    def baseline_for(self, nodeid: str) -> dict[str, Any] | None:
        """{metric: {"rows": [...]}} of this test in the --assay-baseline report."""
        if self.baseline_path is None:
            return None
        if self._baseline is None:
            self._baseline = json.loads(self.baseline_path.read_text(encoding="utf-8"))
        test = self._baseline.get("tests", {}).get(nodeid)
        if not test:
            return None
        return {check["metric"]: check for check in test.get("checks", []) if "rows" in check}

    # -- what a test spent ----------------------------------------------------------------
    def spent(self) -> Spent:
        calls = hits = 0
        cost = 0.0
        for model in (self._judge, self._embeddings):
            if model is not None:
                usage = model.usage.usage
                calls += usage.requests
                hits += usage.cached_requests
                cost += usage.cost
        misses = self._cache.misses if self._cache is not None else 0
        return Spent(calls, hits, cost, misses)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        if self._budget is not None:
            self._budget.close()


__all__ = ["PluginSession", "Spent"]
