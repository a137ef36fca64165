"""The metrics layer never imports the alignment surface; importing assay stays light."""

from __future__ import annotations

import subprocess
import sys


def test_metrics_do_not_import_the_alignment_surface():
    code = (
        "import sys, assay, assay.metrics, assay.metrics.aligned; "
        "from assay.metrics.rag.faithfulness import Faithfulness; Faithfulness(); "
        "print(','.join(m for m in ('assay.alignment', 'scipy', 'numpy', 'dspy') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert loaded.stdout.strip() == ""
