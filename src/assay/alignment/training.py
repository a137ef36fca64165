"""Instruction optimization and Ragas' legacy `train(path, ...)`, behind `metric.optimize_prompts`
and `metric.train`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.alignment.annotations import MetricAnnotation
from assay.alignment.config import DemonstrationConfig, InstructionConfig
from assay.alignment.labels import LabeledSet, as_labeled
from assay.alignment.losses import BinaryMetricLoss, Loss, MSELoss
from assay.alignment.optimizers.genetic import GeneticOptimizer
from assay.alignment.scoring import label_kind
from assay.errors import UsageError
from assay.metrics.aligned import AlignedState, prompt_fingerprints


def default_loss(metric: Any, rows: LabeledSet) -> Loss:
    """BinaryMetricLoss for yes/no labels, MSELoss otherwise (as Ragas chooses)."""
    return BinaryMetricLoss() if label_kind(metric, rows.labels) == "binary" else MSELoss()


def optimize_prompts(metric: Any, dataset: Any, config: InstructionConfig) -> dict[str, str]:
    """Run `config.optimizer` (GeneticOptimizer by default) on the rows; the instructions it
    returns, and the demos it chose if any, go into the metric's aligned state."""
    if not isinstance(config, InstructionConfig):
        raise UsageError(f"config must be an InstructionConfig, got {type(config).__name__}")
    rows = as_labeled(dataset, source="optimization rows")
    optimizer = config.optimizer or GeneticOptimizer()
    optimizer.metric = metric
    optimizer.llm = config.llm or optimizer.llm
    loss = config.loss or default_loss(metric, rows)
    instructions = optimizer.optimize(rows, loss, config.optimizer_config)
    state = metric.alignment or AlignedState(
        metric_class=type(metric).__name__,
        metric_name=metric.name,
        prompts=prompt_fingerprints(metric),
        k=0,
    )
    state.instructions = {**state.instructions, **instructions}
    demos = getattr(optimizer, "chosen_demos", None)
    if demos:  # DSPy's demos become the examples every row is shown (a later align replaces them)
        state.examples = list(demos)
        state.selection = "fixed"
        state.fixed_ids = [demo.id for demo in demos]
        state.k = len(demos)
    state.provenance = {**state.provenance, "optimizer": getattr(optimizer, "last_run", {})}
    metric.set_alignment(state)
    return instructions


def train(
    aligner: Any,
    metric: Any,
    path: Any,
    *,
    demonstration_config: DemonstrationConfig | None = None,
    instruction_config: InstructionConfig | None = None,
) -> None:
    """Ragas' `train(path, ...)`: an annotation .json file; the instruction is optimized when an
    InstructionConfig is given, examples are fitted unless a DemonstrationConfig disables them."""
    if not str(path).endswith(".json"):
        raise UsageError(f"train data must be an annotation .json file, got {Path(path).name}")
    rows = MetricAnnotation.from_json(path, metric.name).to_labeled()
    if instruction_config is not None and instruction_config.enabled:
        optimize_prompts(metric, rows, instruction_config)
    demos = demonstration_config or DemonstrationConfig()
    if demos.enabled:
        state = aligner.fit(
            metric,
            rows,
            embeddings=demos.embedding,
            k=demos.top_k,
            similarity_threshold=demos.threshold,
            balance=demos.balance,
            instructions=metric.alignment.instructions if metric.alignment else None,
        )
        metric.set_alignment(state)


__all__ = ["default_loss", "optimize_prompts", "train"]
