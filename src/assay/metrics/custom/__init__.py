"""Judges users define themselves: prompt templates and decorated functions."""

from assay.metrics.custom.decorators import (
    FunctionMetric,
    discrete_metric,
    numeric_metric,
    ranking_metric,
)
from assay.metrics.custom.llm_metrics import (
    DiscreteMetric,
    NumericalMetric,
    NumericMetric,
    RankingMetric,
)

__all__ = [
    "DiscreteMetric",
    "FunctionMetric",
    "NumericMetric",
    "NumericalMetric",
    "RankingMetric",
    "discrete_metric",
    "numeric_metric",
    "ranking_metric",
]
