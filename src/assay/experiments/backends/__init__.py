"""Dataset backends; see `base.py` for how to write one and `registry.py` for how they are found."""

from assay.experiments.backends.base import DatasetBackend, FileBackend
from assay.experiments.backends.registry import (
    ENTRY_POINT_GROUP,
    backend_names,
    get_backend,
    register_backend,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "DatasetBackend",
    "FileBackend",
    "backend_names",
    "get_backend",
    "register_backend",
]
