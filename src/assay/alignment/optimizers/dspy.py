"""DSPyOptimizer: placeholder replaced below."""

from __future__ import annotations

from dataclasses import dataclass

from assay.alignment.optimizers.base import Optimizer


@dataclass
class DSPyOptimizer(Optimizer):
    pass
