"""An aligned metric from the file `save_alignment` (or `assay align -o`) wrote: the metric is
rebuilt from its recorded class and parameters, then its aligned state is attached, checked
against the prompts the rebuilt metric sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import UsageError
from assay.metrics.aligned import Alignable
from assay.metrics.base import Metric
from assay.metrics.registry import _concrete_subclasses


def _class_named(name: str) -> type[Metric]:
    import assay.metrics  # noqa: F401  (importing the package registers every metric class)

    for cls in _concrete_subclasses(Metric):
        if cls.__name__ == name:
            return cls
    raise UsageError(f"no metric class {name!r} is known to this version of assay")


def load_aligned_metric(path: str | Path, llm: Any = None, embedding_model: Any = None) -> Any:
    source = Path(path)
    try:
        payload = json.loads(source.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the aligned metric {source}: {exc}") from exc
    spec = payload.get("metric") if isinstance(payload, dict) else None
    if not isinstance(spec, dict) or "class" not in spec:
        raise UsageError(
            f"{source} holds no metric description (expected a 'metric' object with 'class')"
        )
    cls = _class_named(spec["class"])
    params = dict(spec.get("params") or {})
    if spec["class"] == "NumericMetric" and isinstance(params.get("allowed_values"), list):
        params["allowed_values"] = tuple(params["allowed_values"])
    if "score_range" in params and isinstance(params["score_range"], list):
        params["score_range"] = tuple(params["score_range"])
    try:
        metric = cls(name=spec["name"], **params, **({"llm": llm} if llm is not None else {}))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{source}: cannot rebuild {spec['class']}: {exc}") from exc
    if not isinstance(metric, Alignable):
        raise UsageError(f"{source}: {spec['class']} is not a judge that can be aligned")
    return metric.load_alignment(source, embedding_model=embedding_model)


__all__ = ["load_aligned_metric"]
