"""Gates for tests and CI: judge-noise-aware assertions and the pytest plugin's machinery.

    from assay.testing import assert_scores, assert_case, assert_in_range

    assert_scores(result, {"faithfulness": ">=0.80"}, ci=0.95, mode="strict")
    assert_case(sample, faithfulness, ">=0.7", repeats=3, rule="majority")
    assert_in_range(result["faithfulness"], value=0.4, plus_or_minus=0.1)
    assert_stable(evaluate(..., repeats=3), min_unanimous=0.9)   # the judge keeps its decisions

The pytest plugin (`pytest_assay`, registered under `pytest11`) adds fixtures (`assay_judge`,
`assay_cache`, `assay_budget`, `assay_evaluate`), the `assay` marker and `--assay-*` options;
see docs/pytest.md.
"""

from assay.models.cache import CacheMiss
from assay.testing.case import CASE_RULES, assert_case, assert_in_range
from assay.testing.gate import (
    MODES,
    GateFailed,
    GateInconclusive,
    MetricCheck,
    ReplayMiss,
    assert_scores,
)
from assay.testing.runs import Runs, evaluate_repeated
from assay.testing.stability import assert_stable
from assay.testing.stats import METHODS, Interval, mean_interval, row_value
from assay.testing.thresholds import Threshold, parse_threshold

__all__ = [
    "CASE_RULES",
    "METHODS",
    "MODES",
    "CacheMiss",
    "GateFailed",
    "GateInconclusive",
    "Interval",
    "MetricCheck",
    "ReplayMiss",
    "Runs",
    "Threshold",
    "assert_case",
    "assert_in_range",
    "assert_scores",
    "assert_stable",
    "evaluate_repeated",
    "mean_interval",
    "parse_threshold",
    "row_value",
]
