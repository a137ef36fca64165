"""The public surface is what `assay.__all__` says, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import assay


def test_every_exported_name_exists():
    missing = [name for name in assay.__all__ if not hasattr(assay, name)]
    assert missing == []


def test_core_names_are_exported():
    for name in ("evaluate", "aevaluate", "EvaluationDataset", "SingleTurnSample", "MultiTurnSample",
                 "EvaluationResult", "MetricResult", "Metric", "HumanMessage", "AIMessage", "ToolMessage",
                 "ToolCall", "DataError", "UsageError"):
        assert name in assay.__all__, name


def test_import_assay_loads_no_heavy_dependency():
    code = (
        "import sys, assay; "
        "print(','.join(m for m in ('pandas', 'numpy', 'torch', 'datasets', 'sacrebleu', 'rouge_score', "
        "'datacompy', 'typer') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""
