"""Ragas' annotation files: `{metric: [{metric_input, metric_output, prompts, is_accepted}]}`.

A sample is what a judge said (`metric_output`, with each prompt's input, output and the reviewer's
`edited_output`) and whether the reviewer accepted it. As a label: `target` when the reviewer gave
one; else the decision the reviewer edited (the `verdict`, `score` or `value` of the one edited
prompt output, when it differs from the judge's); else the judge's output when accepted; else the
flipped output for a rejected yes/no (0/1) verdict.
A rejected score with no target says only "not this", so it is left out, and counted in the notes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.alignment.labels import LabeledExample, LabeledSet
from assay.errors import DataError, UsageError

DECISION_KEYS = ("verdict", "score", "value")


class PromptAnnotation(BaseModel):
    model_config = ConfigDict(extra="allow")

    prompt_input: dict[str, Any]
    prompt_output: Any = None
    edited_output: Any = None


class SampleAnnotation(BaseModel):
    model_config = ConfigDict(extra="allow")

    metric_input: dict[str, Any]
    metric_output: Any = None
    prompts: dict[str, PromptAnnotation] = Field(default_factory=dict)
    is_accepted: bool = True
    target: Any = None

    def edited_decision(self) -> Any:
        """The decision the reviewer wrote into the one edited prompt output (its `verdict`,
        `score` or `value`), when it differs from the judge's; else None. With several edited
        prompts (claims, then verdicts) no single edit is the metric's decision."""
        edited = [
            prompt
            for prompt in self.prompts.values()
            if isinstance(prompt.edited_output, dict)
            and any(key in prompt.edited_output for key in DECISION_KEYS)
        ]
        if len(edited) != 1:
            return None
        prompt = edited[0]
        key = next(key for key in DECISION_KEYS if key in prompt.edited_output)
        value = prompt.edited_output[key]
        before = prompt.prompt_output.get(key) if isinstance(prompt.prompt_output, dict) else None
        if isinstance(value, (dict, list)) or value is None or value == before:
            return None
        return value

    def label(self) -> Any:
        """The label this annotation implies, or None when it implies none (see module doc)."""
        if self.target is not None:
            return self.target
        corrected = self.edited_decision()
        if corrected is not None:
            return corrected
        if self.is_accepted:
            return self.metric_output
        if self.metric_output in (0, 1) and not isinstance(self.metric_output, bool):
            return 1 - int(self.metric_output)
        if isinstance(self.metric_output, bool):
            return not self.metric_output
        return None

    def reason(self) -> str | None:
        """The reviewer's reason when an edited prompt output carries one."""
        for prompt in self.prompts.values():
            edited = prompt.edited_output
            if isinstance(edited, dict):
                for key in ("reason", "reasoning", "feedback"):
                    if isinstance(edited.get(key), str):
                        return edited[key]
        return None


class SingleMetricAnnotation(BaseModel):
    name: str
    samples: list[SampleAnnotation]

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> SampleAnnotation:
        return self.samples[index]

    def __iter__(self) -> Iterator[SampleAnnotation]:  # type: ignore[override]  # samples, not fields
        return iter(self.samples)

    @classmethod
    def from_json(cls, path: str | Path, metric_name: str | None = None) -> SingleMetricAnnotation:
        return MetricAnnotation.from_json(path, metric_name)

    def select(self, indices: Any) -> SingleMetricAnnotation:
        return SingleMetricAnnotation(name=self.name, samples=[self.samples[i] for i in indices])

    def get_prompt_annotations(self) -> dict[str, list[PromptAnnotation]]:
        """Per prompt name, the prompt annotations of accepted samples."""
        found: dict[str, list[PromptAnnotation]] = {}
        for sample in self.samples:
            if sample.is_accepted:
                for name, prompt in sample.prompts.items():
                    found.setdefault(name, []).append(prompt)
        return found

    def sample(
        self, n: int, stratify_key: str | None = None, seed: int = 42
    ) -> SingleMetricAnnotation:
        if n > len(self.samples):
            raise UsageError(f"asked for {n} samples; the annotation has {len(self.samples)}")
        rng = random.Random(seed)
        if stratify_key is None:
            return self.select(sorted(rng.sample(range(len(self.samples)), n)))
        by_value: dict[str, list[int]] = {}
        for index, sample in enumerate(self.samples):
            by_value.setdefault(json.dumps(getattr(sample, stratify_key, None)), []).append(index)
        chosen: list[int] = []
        for indices in by_value.values():
            share = round(len(indices) / len(self.samples) * n)
            chosen.extend(rng.sample(indices, min(share, len(indices))))
        rest = [i for i in range(len(self.samples)) if i not in set(chosen)]
        rng.shuffle(rest)
        chosen = (chosen + rest)[:n]
        return self.select(sorted(chosen))

    def batch(self, batch_size: int, drop_last_batch: bool = False) -> list[list[SampleAnnotation]]:
        if batch_size < 1:
            raise UsageError(f"batch_size must be at least 1, got {batch_size}")
        batches = [
            self.samples[i : i + batch_size] for i in range(0, len(self.samples), batch_size)
        ]
        if drop_last_batch and batches and len(batches[-1]) < batch_size:
            batches.pop()
        return batches

    def to_labeled(self) -> LabeledSet:
        examples = []
        dropped = 0
        for index, sample in enumerate(self.samples):
            label = sample.label()
            if label is None:
                dropped += 1
                continue
            examples.append(
                LabeledExample(
                    id=f"{self.name}-{index}",
                    fields=dict(sample.metric_input),
                    label=label,
                    reason=sample.reason(),
                    judge_value=sample.metric_output,
                )
            )
        if not examples:
            raise DataError(f"annotation {self.name!r}: no sample implies a label")
        notes = [f"{dropped} rejected score(s) without a target left out"] if dropped else []
        return LabeledSet(examples, f"annotation {self.name}", notes)

    def train_test_split(
        self, test_size: float = 0.2, seed: int = 42, stratify: bool = True
    ) -> tuple[LabeledSet, LabeledSet]:
        return self.to_labeled().train_test_split(test_size, seed, stratify)


class MetricAnnotation(BaseModel):
    """A whole annotation file: metric name -> its samples."""

    root: dict[str, SingleMetricAnnotation]

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], metric_name: str | None, *, source: str = "annotation"
    ) -> SingleMetricAnnotation:
        if metric_name is None:
            if len(data) != 1:
                raise UsageError(f"{source} annotates {sorted(data)}; choose one with metric_name=")
            metric_name = next(iter(data))
        if metric_name not in data:
            raise UsageError(
                f"{source} has no annotations for {metric_name!r} (it has {sorted(data)})"
            )
        samples = data[metric_name]
        if not isinstance(samples, list):
            raise DataError(f"{source}: {metric_name} must be a list of samples", field=metric_name)
        parsed = []
        for index, raw in enumerate(samples):
            try:
                parsed.append(SampleAnnotation.model_validate(raw))
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(part) for part in problem["loc"])
                raise DataError(
                    f"{metric_name}[{index}].{where}: {problem['msg']}", file=source, field=where
                ) from None
        return SingleMetricAnnotation(name=metric_name, samples=parsed)

    @classmethod
    def from_json(cls, path: str | Path, metric_name: str | None = None) -> SingleMetricAnnotation:
        source = Path(path)
        if source.suffix.lower() != ".json":
            raise UsageError(f"annotations must be a .json file, got {source.name}")
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read annotations from {source}: {exc}") from exc
        if not isinstance(data, dict):
            raise DataError(f"{source}: expected an object of metric name -> samples")
        return cls.from_dict(data, metric_name, source=str(source))


__all__ = ["MetricAnnotation", "PromptAnnotation", "SampleAnnotation", "SingleMetricAnnotation"]
