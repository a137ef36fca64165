"""Every test-set name of the Ragas spec is importable from assay.testset or its submodules,
and importing the package stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_every_ragas_testset_name_exists() -> None:
    import assay.testset as testset
    import assay.testset.persona as persona
    import assay.testset.synthesizers as synthesizers
    import assay.testset.transforms as transforms

    spec = Path(__file__).resolve().parents[3] / "shared" / "spec" / "api-surface.json"
    if not spec.exists():
        pytest.skip("the spec's api-surface.json is not beside this checkout")
    names = [e["name"] for e in json.loads(spec.read_text()) if e["area"] == "testset"]
    assert len(names) == 52
    modules = (testset, transforms, synthesizers, persona)
    assert [n for n in names if not any(hasattr(m, n) for m in modules)] == []
    assert set(testset.__all__) <= set(dir(testset))


def test_importing_the_package_loads_no_framework_or_keyphrase_library() -> None:
    code = (
        "import sys, assay.testset; "
        "print(','.join(m for m in ('langchain_core', 'llama_index', 'yake', 'pandas', 'torch') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""
