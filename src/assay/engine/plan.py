"""What a run is given, checked before any work: the dataset, the metrics, and its settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import DataError, UsageError
from assay.metrics.base import Metric
from assay.metrics.registry import create_metric
from assay.schema.dataset import EvaluationDataset


def coerce_dataset(dataset: Any, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
    """Accept an EvaluationDataset, a list of dicts/samples, a pandas frame, an HF dataset or a path."""
    if dataset is None:
        raise UsageError("evaluate() needs a dataset")
    if isinstance(dataset, EvaluationDataset):
        if column_map:
            return EvaluationDataset.from_list(dataset.to_list(), column_map=column_map)
        return dataset
    if isinstance(dataset, (str, Path)):
        return EvaluationDataset.load(dataset, column_map=column_map)
    if hasattr(dataset, "to_dict") and hasattr(dataset, "columns"):  # pandas DataFrame
        return EvaluationDataset.from_pandas(dataset, column_map=column_map)
    if hasattr(dataset, "to_list") and hasattr(
        dataset, "features"
    ):  # Hugging Face datasets.Dataset
        return EvaluationDataset.from_hf_dataset(dataset, column_map=column_map)
    if isinstance(dataset, Sequence):
        items = list(dataset)
        if items and all(not isinstance(item, Mapping) for item in items):
            return EvaluationDataset(items)
        return EvaluationDataset.from_list(items, column_map=column_map)
    raise UsageError(f"evaluate() cannot use a dataset of type {type(dataset).__name__}")


def coerce_metrics(metrics: Any) -> list[Metric]:
    """Metric objects and ids as metrics. None means Ragas' default list: answer_relevancy,
    context_precision, faithfulness, context_recall."""
    if metrics is None:
        from assay.metrics.singletons import DEFAULT_METRICS

        return list(DEFAULT_METRICS)
    if isinstance(metrics, Sequence) and not metrics:
        raise UsageError("evaluate() needs at least one metric, e.g. metrics=[BleuScore()]")
    if isinstance(metrics, (str, Metric)) or not isinstance(metrics, Sequence):
        raise UsageError(
            "metrics must be a list, e.g. metrics=[BleuScore()] or metrics=['bleu_score']"
        )
    resolved = [create_metric(item) if isinstance(item, str) else item for item in metrics]
    for position, metric in enumerate(resolved):
        if not isinstance(metric, Metric):
            raise UsageError(
                f"metrics[{position}] is a {type(metric).__name__}, not a metric object or metric name"
            )
    names = [metric.name for metric in resolved]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsageError(
            f"two metrics are named {', '.join(duplicates)}; give one a different name=... so results "
            "can be told apart"
        )
    return resolved


def check_metric_fits(metric: Metric, dataset: EvaluationDataset) -> None:
    """Mistakes that would skip every row are reported before any work starts."""
    if not len(dataset):
        return
    if dataset.kind not in metric.sample_kinds:
        wanted = (
            "multi-turn (conversation)" if metric.sample_kind == "multi_turn" else "single-turn"
        )
        raise UsageError(
            f"metric {metric.name} scores {wanted} samples, but the dataset is {dataset.kind.replace('_', '-')}"
        )
    present = set(dataset.features()) | set(dataset.extra_columns())
    absent = [field for field in metric.fields_for(dataset.kind)[0] if field not in present]
    if absent:
        raise UsageError(
            f"metric {metric.name} needs {', '.join(absent)}, which no row of the dataset has "
            f"(it has {', '.join(sorted(present)) or 'no fields'})"
        )
    if metric.needs_llm or metric.needs_embeddings:
        _check_sendable(metric, dataset)


def _check_sendable(metric: Metric, dataset: EvaluationDataset) -> None:
    """Text a model request cannot carry fails every cell that sends it: a lone surrogate (a
    JSON "\\ud800" escape without its pair) is valid in a dataset, and classic metrics compare it
    as it is, but no HTTP body can encode it. Said once, naming the row and field, before work."""
    required, optional = metric.fields_for(dataset.kind)
    for index, sample in enumerate(dataset):
        for field in (*required, *optional):
            value = getattr(sample, field, None)
            texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            for text in texts:
                if not isinstance(text, str):
                    continue
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise DataError(
                        f"{field} holds a lone surrogate ({text[exc.start]!a} at character "
                        f"{exc.start + 1}), which no request to a model can carry; metric "
                        f"{metric.name} sends it to its judge. Fix the text (or the source's "
                        "escapes), or score this column with a metric that needs no model",
                        row=index,
                        row_is_index=True,
                        field=field,
                    ) from None


def check_settings(timeout: Any, budget: Any) -> None:
    """Numbers that would fail only after the work began are refused before it."""
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise UsageError(
                f"timeout must be a number of seconds or None (no limit), got {_type_name(timeout)}"
            )
        if not timeout > 0:  # also NaN
            raise UsageError(
                f"timeout must be more than 0 seconds (or None for no limit), got {timeout!r}"
            )
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            raise UsageError(
                f"budget must be a number of USD or None (no cap), got {_type_name(budget)}"
            )
        if not budget >= 0:  # also NaN
            raise UsageError(f"budget must be 0 USD or more (or None for no cap), got {budget!r}")


def check_flags(**flags: Any) -> None:
    """Yes/no settings are booleans: a string such as "yes" or "false" would otherwise be taken
    as true (any non-empty string is), silently turning on what the caller meant to turn off."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be True or False, got {value!r}")


def _type_name(value: Any) -> str:
    module = type(value).__module__.split(".")[0]
    return type(value).__name__ if module == "builtins" else f"{module}.{type(value).__name__}"


__all__ = ["check_metric_fits", "check_settings", "coerce_dataset", "coerce_metrics"]
