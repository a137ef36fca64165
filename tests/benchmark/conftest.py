"""The meta-evaluation data is read in place, never copied into the repository. Where it is looked
for, in order: $ASSAY_METAEVAL_DIR; ../shared/data/metaeval beside this repository; and, for a local
clone (`git clone /path/to/assay`), the same place beside the repository it was cloned from."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
RELATIVE = Path("shared") / "data" / "metaeval"


def _origin_parent() -> Path | None:
    """The folder holding the repository this one was cloned from, when that is a local path."""
    try:
        url = subprocess.run(
            ["git", "config", "--get", "remote.origin.url"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    origin = Path(url.removeprefix("file://"))
    return origin.resolve().parent if url and origin.is_absolute() and origin.is_dir() else None


def candidates() -> list[Path]:
    found = [Path(os.environ["ASSAY_METAEVAL_DIR"])] if os.environ.get("ASSAY_METAEVAL_DIR") else []
    found.append(REPO_ROOT.parent / RELATIVE)
    origin = _origin_parent()
    if origin is not None:
        found.append(origin / RELATIVE)
    return found


@pytest.fixture(scope="session")
def metaeval_dir() -> Path:
    places = candidates()
    for place in places:
        if place.is_dir():
            return place
    pytest.fail(
        "the meta-evaluation data is missing: looked in "
        + ", ".join(str(p) for p in places)
        + " for wikieval/, ares_databricks/, begin_wow/, halueval/, ragchecker/ and bfcl/. Set "
        "ASSAY_METAEVAL_DIR or put the data at ../shared/data/metaeval; it is read in place, never copied."
    )
