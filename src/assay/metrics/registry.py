"""Find metric classes by their id (`bleu_score`, `faithfulness`, ...).

Every concrete `Metric` subclass imported by `assay.metrics` is in the catalogue; its id is
the default of its `name` field. Third-party metrics join by subclassing `Metric` and being
imported before lookup.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from typing import Any

from assay.errors import UsageError
from assay.metrics.base import Metric


def _concrete_subclasses(cls: type[Metric]) -> list[type[Metric]]:
    found: list[type[Metric]] = []
    for sub in cls.__subclasses__():
        if not inspect.isabstract(sub):
            found.append(sub)
        found.extend(_concrete_subclasses(sub))
    return found


def default_name(cls: type[Metric]) -> str:
    field = {f.name: f for f in dataclasses.fields(cls)}["name"]
    return field.default if isinstance(field.default, str) else ""


def metric_classes() -> dict[str, type[Metric]]:
    """Metric id -> class, for every concrete metric currently imported."""
    import assay.metrics  # noqa: F401  (importing the package fills the catalogue)

    catalogue: dict[str, type[Metric]] = {}
    for cls in _concrete_subclasses(Metric):
        name = default_name(cls)
        if name and name not in catalogue:
            catalogue[name] = cls
    return dict(sorted(catalogue.items()))


def stock_metrics() -> dict[str, Metric]:
    """Ready-made configured metrics known by id (e.g. the stock aspect critics)."""
    from assay.metrics.general import aspect_critic

    return {
        m.name: m
        for m in (
            aspect_critic.harmfulness,
            aspect_critic.maliciousness,
            aspect_critic.coherence,
            aspect_critic.correctness,
            aspect_critic.conciseness,
        )
    }


def create_metric(metric_id: str, /, **params: Any) -> Metric:
    """Instantiate the metric `metric_id`; an unknown id is a UsageError with suggestions.

    `params` are the metric's fields; `name=` renames this instance.
    """
    catalogue = metric_classes()
    cls = catalogue.get(metric_id)
    stock = stock_metrics()
    if cls is None and metric_id in stock:
        try:
            return dataclasses.replace(stock[metric_id], **params)
        except (TypeError, ValueError) as exc:  # unknown field, or a value the metric refuses
            raise UsageError(f"metric {metric_id!r}: {exc}") from None
    if cls is None:
        close = difflib.get_close_matches(metric_id, [*catalogue, *stock], n=3)
        hint = (
            f"; did you mean {', '.join(close)}?" if close else "; `assay metrics` lists them all"
        )
        raise UsageError(f"unknown metric {metric_id!r}{hint}")
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:  # unknown field, or a value the metric refuses
        raise UsageError(f"metric {metric_id!r}: {exc}") from None


__all__ = ["create_metric", "default_name", "metric_classes", "stock_metrics"]
