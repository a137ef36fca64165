"""Choosing the benchmark cascade's band and tolerance on BEGIN dev, with `assay.alignment.fit_cascade`.

The first way `benchmarks/cascade.py` chose a band (the middle of the 0.5B judge's P(yes) on dev)
assumed the small judge is unsure where it is wrong. On WikiEval it is not: it answers "yes" to
unsupported statements with P(yes) above that middle band. Here both judges answer the same BEGIN
dev rows and `fit_cascade` routes every candidate band and tolerance over their cached answers,
keeping the one closest to the 1.5B judge's scores within the escalation budget. Nothing of a
test split is seen; the choice is written down with every candidate's figures and with how well
the 0.5B judge's P(yes) predicts the 1.5B judge's verdicts there.
"""

from __future__ import annotations

from typing import Any

from assay.alignment import fit_cascade
from assay.benchmark.runner import load_suite
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models.llm import LLM

BUDGET = 0.4  # of dev cells escalated at most: under the half with room for the test split


def choose_on_dev(
    first: LLM, then: LLM, data_dir: str | None, rows: int, budget: float = BUDGET
) -> dict[str, Any]:
    """Fit on `rows` BEGIN dev rows (stratified, as the runner samples them), one row at a time.
    The judges' caches keep every answer, so a fit run again from them asks no model."""
    _, data = load_suite(
        "begin", "faithfulness", data_dir=data_dir, aspect=None, split="dev", limit=rows, seed=0
    )
    fit = fit_cascade(
        data.rows, Faithfulness(), first=first, then=then, budget=budget, max_concurrency=1
    )
    return {
        "method": "closest to the 1.5B judge on dev within the escalation budget (fit_cascade)",
        "rows": rows,
        **fit.to_dict(),
    }
