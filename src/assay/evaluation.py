"""Ragas' `ragas.evaluation` under assay's name; what it holds and where each name lives:
`assay/compat/ragas/paths.py`."""

from assay.compat.ragas.paths import reexport

__all__ = reexport(__name__, globals())
