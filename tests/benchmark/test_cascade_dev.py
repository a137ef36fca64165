"""How benchmarks/cascade_dev.py keeps a cascade's band and tolerance among dev candidates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).parents[2] / "benchmarks" / "cascade_dev.py"
_spec = importlib.util.spec_from_file_location("cascade_dev", _PATH)
assert _spec is not None and _spec.loader is not None
cascade_dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cascade_dev)


def _candidate(band: tuple[float, float], escalated: float, difference: float) -> dict:
    return {
        "band": list(band),
        "tolerance": 0.0,
        "escalated_share": escalated,
        "mean_abs_difference": difference,
    }


def test_the_closest_candidate_within_the_budget_is_kept() -> None:
    closest_but_too_costly = _candidate((0.0, 1.0), 0.9, 0.0)
    kept = _candidate((0.2, 0.95), 0.35, 0.04)
    further = _candidate((0.4, 0.8), 0.2, 0.09)
    assert cascade_dev.pick([closest_but_too_costly, further, kept], budget=0.4) is kept


def test_a_tie_goes_to_the_candidate_escalating_less() -> None:
    costly = _candidate((0.1, 0.95), 0.38, 0.05)
    cheap = _candidate((0.3, 0.9), 0.22, 0.05)
    assert cascade_dev.pick([costly, cheap], budget=0.4) is cheap


def test_with_no_candidate_inside_the_budget_the_least_escalating_is_kept() -> None:
    a = _candidate((0.0, 1.0), 0.9, 0.0)
    b = _candidate((0.4, 0.8), 0.6, 0.1)
    assert cascade_dev.pick([a, b], budget=0.4) is b
    with pytest.raises(ValueError, match="no candidate"):
        cascade_dev.pick([])


def test_band_edges_are_dev_quantiles_with_both_ends() -> None:
    probabilities = [i / 100 for i in range(101)]  # P(yes) 0.00 .. 1.00, evenly
    lows, highs = cascade_dev.band_edges(probabilities)
    assert lows[0] == 0.0 and highs[-1] == 1.0
    assert lows == sorted(lows) and highs == sorted(highs)
    # the 5th percentile of an even spread is about 0.04-0.05, the 95th about 0.94-0.95
    assert 0.03 <= lows[1] <= 0.06 and 0.93 <= highs[-2] <= 0.96
    assert max(lows) <= min(highs)  # lows stop at the median, highs start there
