"""The meta-evaluation data is read in place, never copied into the repository. Where it is looked
for, in order: $ASSAY_METAEVAL_DIR; ../shared/data/metaeval beside this repository; and, for a local
clone (`git clone /path/to/assay`), the same place beside the repository it was cloned from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_dir import candidates as shared_candidates

RELATIVE = Path("data") / "metaeval"


def candidates() -> list[Path]:
    return shared_candidates(RELATIVE, "ASSAY_METAEVAL_DIR")


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
