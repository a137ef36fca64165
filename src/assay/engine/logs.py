"""`set_logging_level`: Ragas' helper to see a part of the library's log."""

from __future__ import annotations

import logging
import sys

from assay.errors import UsageError


def set_logging_level(logger_name: str, level: int | str) -> logging.Logger:
    """Set the level of logger `logger_name`, giving it a stderr handler if it has none.

    Ragas' logger names are read as assay's (`"ragas.cache"` is `"assay.cache"`). `level` is a
    `logging` level (`logging.DEBUG`) or its name (`"DEBUG"`)."""
    if not isinstance(logger_name, str) or not logger_name.strip():
        raise UsageError(
            f"logger_name must be a logger's name such as 'assay', got {logger_name!r}"
        )
    if isinstance(level, str):
        named = logging.getLevelName(level.upper())
        if not isinstance(named, int):
            raise UsageError(
                f"level must be a logging level such as logging.DEBUG or 'DEBUG', got {level!r}"
            )
        level = named
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise UsageError(
            f"level must be a logging level such as logging.DEBUG or 'DEBUG', got {level!r}"
        )
    name = (
        "assay" + logger_name[len("ragas") :]
        if logger_name.split(".")[0] == "ragas"
        else logger_name
    )
    logger = logging.getLogger(name)
    logger.setLevel(level)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
        logger.addHandler(handler)
    return logger


__all__ = ["set_logging_level"]
