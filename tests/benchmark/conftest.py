"""The meta-evaluation data is read in place from ../shared/data/metaeval beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
METAEVAL_DIR = REPO_ROOT.parent / "shared" / "data" / "metaeval"


@pytest.fixture(scope="session")
def metaeval_dir() -> Path:
    if not METAEVAL_DIR.is_dir():
        pytest.fail(
            f"the meta-evaluation data is missing: expected {METAEVAL_DIR} (../shared/data/metaeval "
            "relative to the repository root), with wikieval/, ares_databricks/, begin_wow/, halueval/, "
            "ragchecker/ and bfcl/. The tests read those files in place; they are never copied into the repo."
        )
    return METAEVAL_DIR
