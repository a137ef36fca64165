"""Import optional dependencies at the point of use, with an install hint when missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from assay.errors import MissingDependency


def require(
    module: str, *, extra: str, package: str | None = None, feature: str | None = None
) -> ModuleType:
    """Import `module` or raise `MissingDependency` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(package or module.split(".")[0], extra, feature) from exc
