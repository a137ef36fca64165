"""What every instruction optimizer shares: the metric and model it works with, the rows it may
read (training rows only: it is handed nothing else), a call budget and a progress bar, and how a
candidate instruction is scored under a loss."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.alignment.labels import LabeledExample, LabeledSet, as_labeled
from assay.alignment.losses import Loss
from assay.alignment.scoring import (
    CallBudget,
    RowScore,
    ascore_rows,
    check_rows,
    label_kind,
    normalise_label,
    numeric_value,
)
from assay.errors import UsageError
from assay.metrics.aligned import TEMPLATE, AlignedState, prompt_fingerprints
from assay.metrics.custom.template import placeholders


@dataclass
class Fitness:
    """A candidate's loss on the rows it was scored on, and which rows it got right."""

    instruction: str
    loss: float
    correct: list[bool]
    scores: list[RowScore]


@dataclass
class Optimizer:
    """Base of the optimizers: `optimize(dataset, loss, config) -> {prompt id: instruction}`."""

    metric: Any = None
    llm: Any = None
    max_calls: int | None = 1000
    show_progress: bool = True
    seed: int = 42
    last_run: dict[str, Any] = field(default_factory=dict, repr=False)

    def optimize(
        self,
        dataset: Any,
        loss: Loss,
        config: dict[str, Any] | None = None,
        run_config: Any = None,
        batch_size: int | None = None,
        callbacks: Any = None,
        with_debugging_logs: bool = False,
        raise_exceptions: bool = True,
    ) -> dict[str, str]:
        raise NotImplementedError

    # -- shared mechanics ----------------------------------------------------------------------
    def _ready(self, dataset: Any, loss: Loss) -> LabeledSet:
        if self.metric is None:
            raise UsageError(
                f"{type(self).__name__} needs a metric (set .metric or use metric.optimize_prompts)"
            )
        if not isinstance(loss, Loss):
            raise UsageError(
                f"loss must be a Loss (MSELoss, HuberLoss, BinaryMetricLoss), got {type(loss).__name__}"
            )
        rows = as_labeled(dataset, source="optimization rows")
        check_rows(self.metric, rows, rows.source)
        return rows

    def target_prompt(self, config: dict[str, Any]) -> str:
        """The prompt whose instruction is rewritten: `config["prompt"]`, else the one the metric
        sends last (the one that decides: a verdict or a rating)."""
        if hasattr(self.metric, "prompt_ids"):
            ids = tuple(self.metric.prompt_ids)
            wanted = config.get("prompt", ids[-1])
            if wanted not in ids:
                raise UsageError(
                    f"{self.metric.name} sends no prompt {wanted!r} (it sends {list(ids)})"
                )
            return wanted
        return TEMPLATE

    def instruction_of(self, prompt_id: str) -> str:
        state = self.metric.alignment
        if state is not None and prompt_id in state.instructions:
            return state.instructions[prompt_id]
        if prompt_id == TEMPLATE:
            return self.metric.prompt
        return self.metric.judge_prompt(prompt_id).instruction

    def acceptable(self, prompt_id: str, instruction: str) -> bool:
        """A template candidate must keep exactly the template's placeholders."""
        if not instruction.strip():
            return False
        if prompt_id == TEMPLATE:
            try:
                return set(placeholders(instruction)) == set(placeholders(self.metric.prompt))
            except ValueError:  # an unbalanced brace
                return False
        return True

    def with_instruction(self, prompt_id: str, instruction: str) -> Any:
        """A copy of the metric that sends `instruction` (its examples and threshold kept)."""
        base = self.metric.alignment
        state = (
            copy.copy(base)
            if base is not None
            else AlignedState(
                metric_class=type(self.metric).__name__,
                metric_name=self.metric.name,
                prompts=prompt_fingerprints(self.metric),
                k=0,
            )
        )
        state.instructions = {**state.instructions, prompt_id: instruction}
        return copy.copy(self.metric).set_alignment(state)

    def sample_rows(self, rows: LabeledSet, size: int | None) -> list[LabeledExample]:
        """A seeded sample stratified by label (all rows when `size` covers them)."""
        if size is None or size >= len(rows):
            return list(rows)
        rng = random.Random(self.seed)
        by_label: dict[str, list[LabeledExample]] = {}
        for example in rows:
            by_label.setdefault(repr(example.label), []).append(example)
        for members in by_label.values():
            rng.shuffle(members)
        chosen: list[LabeledExample] = []
        queues = list(by_label.values())
        while len(chosen) < size:
            for queue in queues:
                if queue and len(chosen) < size:
                    chosen.append(queue.pop())
        return chosen

    async def fitness(
        self,
        prompt_id: str,
        instruction: str,
        rows: Sequence[LabeledExample],
        loss: Loss,
        budget: CallBudget,
        threshold: float,
    ) -> Fitness:
        """Score the rows with the candidate; the loss covers the rows that scored (a failed row
        counts as wrong, and as the worst possible value for a regression loss)."""
        metric = self.with_instruction(prompt_id, instruction)
        scores = await ascore_rows(
            metric,
            rows,
            budget=budget,
            description="candidate",
            show_progress=False,
            exclude_own_group=True,
        )
        kind = label_kind(self.metric, [row.label for row in rows])
        labels = [normalise_label(kind, row.label) for row in rows]
        predicted: list[float] = []
        actual: list[float] = []
        correct: list[bool] = []
        for score, label in zip(scores, labels, strict=True):
            value = numeric_value(score.value) if score.ok else None
            if kind not in ("binary", "ordinal", "numeric"):
                correct.append(score.ok and repr(score.value) == repr(label))
                predicted.append(float(correct[-1]))
                actual.append(1.0)
                continue
            if value is None:
                correct.append(False)
                predicted.append((1.0 - float(label)) if kind == "binary" else float("nan"))
                actual.append(float(label))
                continue
            decided = (
                float(value >= threshold) if (kind == "binary" and loss.needs_decisions) else value
            )
            predicted.append(decided)
            actual.append(float(label))
            correct.append(
                (value >= threshold) == bool(label) if kind == "binary" else value == label
            )
        pairs = [(p, a) for p, a in zip(predicted, actual, strict=True) if p == p]
        if not pairs:
            return Fitness(instruction, float("nan"), correct, scores)
        value = loss([p for p, _ in pairs], [a for _, a in pairs])
        return Fitness(instruction, value, correct, scores)


__all__ = ["Fitness", "Optimizer"]
