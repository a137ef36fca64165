"""Instruction optimizers: GeneticOptimizer (built in) and DSPyOptimizer (the `dspy` extra)."""

from assay.alignment.optimizers.base import Fitness, Optimizer
from assay.alignment.optimizers.dspy import DSPyOptimizer
from assay.alignment.optimizers.genetic import GeneticOptimizer

__all__ = ["DSPyOptimizer", "Fitness", "GeneticOptimizer", "Optimizer"]
