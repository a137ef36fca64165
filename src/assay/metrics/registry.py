"""Find metric classes by their id (`bleu_score`, `faithfulness`, ...): one `Registry` (see
`assay._util.registry`) of assay's own metrics, `register_metric` classes and the `assay.metrics`
entry-point group.

assay's own metrics are every concrete `Metric` subclass defined in the `assay` package; a
metric's id is the default of its `name` field, so a new built-in metric is one file (imported by
its subpackage's `__init__`). A metric of another package joins by declaring an entry point

    [project.entry-points."assay.metrics"]
    my_metric = "my_package.metrics:MyMetric"

or, in process, by `register_metric(MyMetric)`. Defining a subclass alone registers nothing: a
catalogue that grew with every class ever imported (tests, notebooks) named things nobody chose.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from typing import Any

from assay._util.registry import Registry
from assay.errors import UsageError
from assay.metrics.base import Metric

ENTRY_POINT_GROUP = "assay.metrics"
logger = logging.getLogger(__name__)


def _concrete_subclasses(cls: type) -> list[type[Metric]]:
    """The metric classes below `cls` that can be made (`cls` is a plain `type` so that the
    abstract `Metric` itself can be passed)."""
    found: list[type[Metric]] = []
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        if not inspect.isabstract(sub) and issubclass(sub, Metric):
            found.append(sub)
        found.extend(_concrete_subclasses(sub))
    return found


def default_name(cls: type[Metric]) -> str:
    field = {f.name: f for f in dataclasses.fields(cls)}["name"]
    return field.default if isinstance(field.default, str) else ""


def _builtin_metrics() -> dict[str, type[Metric]]:
    """assay's own metric classes by id, found once `assay.metrics` has imported them all."""
    import assay.metrics  # noqa: F401  (the package imports every built-in metric module)

    catalogue: dict[str, type[Metric]] = {}
    for cls in _concrete_subclasses(Metric):
        name = default_name(cls)
        if name and cls.__module__.split(".")[0] == "assay" and name not in catalogue:
            catalogue[name] = cls
    return dict(sorted(catalogue.items()))


def _metric_class(obj: Any) -> type[Metric]:
    if not (isinstance(obj, type) and issubclass(obj, Metric)) or inspect.isabstract(obj):
        raise TypeError(f"a metric must be a concrete Metric subclass, got {obj!r}")
    if not default_name(obj):
        raise TypeError(f"{obj.__name__} needs a default for its `name` field (its id)")
    return obj


METRICS: Registry[type[Metric]] = Registry(
    "metric",
    ENTRY_POINT_GROUP,
    builtins=_builtin_metrics,
    check=_metric_class,
    list_hint="`assay metrics` lists them all",
)


def register_metric(cls: type[Metric], name: str | None = None) -> type[Metric]:
    """Make `cls` known by `name` (default: its `name` field's default) in this process; returns
    `cls`, so it also works as a class decorator."""
    checked = _metric_class(cls) if name is None else cls
    METRICS.register(name or default_name(checked), cls)
    return cls


def metric_classes() -> dict[str, type[Metric]]:
    """Metric id -> class, for every metric known now (built-ins, registered, entry points). A
    plugin that fails to load is left out with a warning naming it: one broken package must not
    hide the catalogue (asking for that metric by id still raises its error)."""
    catalogue: dict[str, type[Metric]] = {}
    for name in METRICS.names():
        try:
            catalogue[name] = METRICS.get(name)
        except UsageError as exc:
            logger.warning("%s", exc)
    return catalogue


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
    cls = METRICS.find(metric_id)
    stock = stock_metrics()
    if cls is None and metric_id in stock:
        try:
            return dataclasses.replace(stock[metric_id], **params)
        except (TypeError, ValueError) as exc:  # unknown field, or a value the metric refuses
            raise UsageError(f"metric {metric_id!r}: {exc}") from None
    if cls is None:
        raise UsageError(METRICS.unknown_message(METRICS.key(metric_id), extra=stock))
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:  # unknown field, or a value the metric refuses
        raise UsageError(f"metric {metric_id!r}: {exc}") from None


__all__ = [
    "ENTRY_POINT_GROUP",
    "METRICS",
    "create_metric",
    "default_name",
    "metric_classes",
    "register_metric",
    "stock_metrics",
]
