"""Each framework stays optional: without its package, importing the integration says what to
install (checked in a fresh interpreter where the package cannot be imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("assay.integrations.langchain", "langchain_core", "langchain"),
        ("assay.integrations.llama_index", "llama_index", "llamaindex"),
        ("assay.integrations.haystack", "haystack", "haystack"),
    ],
)
def test_a_missing_framework_names_its_extra(module: str, blocked: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "from assay.errors import MissingDependency\n"
        "try:\n"
        f"    import {module}\n"
        "except MissingDependency as exc:\n"
        "    print(exc)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert f"pip install 'assay[{extra}]'" in ran.stdout
