"""Running evaluations: planning, concurrency, checkpoints, progress."""

from assay.engine.run import aevaluate, evaluate

__all__ = ["aevaluate", "evaluate"]
