"""Ragas' configuration objects for `metric.train` and `metric.optimize_prompts`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class InstructionConfig:
    """Instruction search: the optimizer (GeneticOptimizer by default), the model that writes the
    candidates (else the metric's judge), the loss (by label kind when None), and options passed to
    `optimizer.optimize(..., config=optimizer_config)`."""

    llm: Any = None
    optimizer: Any = None
    loss: Any = None
    optimizer_config: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True


@dataclass
class DemonstrationConfig:
    """Few-shot examples: `top_k` per row, chosen by similarity with the `embedding` model among
    examples at least `threshold` similar (None: no floor), labels taking turns with `balance`."""

    embedding: Any = None
    enabled: bool = True
    top_k: int = 3
    threshold: float | None = 0.7
    technique: str = "similarity"
    balance: bool = True


__all__ = ["DemonstrationConfig", "InstructionConfig"]
