"""The compare page's chart layout: each criterion on its own scale, a mean at the bottom of the
scale still a drawn bar with its figure, a cohort without a score said in its slot, whiskers only
where there is an interval."""

from __future__ import annotations

from assay.platform.server.storage.experiment_compare import Cell, CriterionComparison, scale_of
from assay.platform.server.ui.compare_charts import STUB, criterion_chart


def _cell(mean, low=None, high=None):
    return Cell(mean, low, high, n=4, n_scored=0 if mean is None else 4, coverage=1.0)


def test_each_kind_of_criterion_has_its_scale():
    assert scale_of({"criteria_type": "llm_judge", "output_type": "5-point"}, [4.0]) == (1.0, 5.0)
    assert scale_of({"criteria_type": "llm_judge", "output_type": "bool"}, []) == (0.0, 1.0)
    assert scale_of({"criteria_type": "function", "output_type": ""}, [1.0]) == (0.0, 1.0)
    # a free rubric: the span of its scores, 0 and 1 included
    assert scale_of({"criteria_type": "llm_judge", "output_type": "prompt"}, [7.5, 3]) == (0, 8)
    assert scale_of({"criteria_type": "llm_judge", "output_type": "prompt"}, [-2.5]) == (-3, 1)


def test_a_zero_is_drawn_a_missing_score_is_said_and_whiskers_follow_intervals():
    compared = CriterionComparison(
        name="Correct",
        key=0,
        output_type="bool",
        scale=(0.0, 1.0),
        cells={"a": _cell(0.0), "b": _cell(0.5, 0.25, 0.75), "c": _cell(None)},
    )
    chart = criterion_chart(0, compared, ["a", "b", "c"])
    heights = {bar.tip.split(":")[0]: float(bar.height) for bar in chart.bars}
    assert set(heights) == {"a", "b"}
    assert heights["a"] >= STUB and heights["b"] > heights["a"]
    texts = [t.text for t in chart.texts]
    assert "0.00" in texts and "0.50" in texts and "no score" in texts
    assert len(chart.whiskers) == 1 and chart.whiskers[0].tip.startswith("b:")
    assert [t.text for t in chart.texts if t.anchor == "end"] == ["0", "1"]


def test_a_five_point_mean_is_placed_on_1_to_5():
    compared = CriterionComparison(
        name="Relevance",
        key=1,
        output_type="5-point",
        scale=(1.0, 5.0),
        cells={"a": _cell(3.0, 2.0, 4.0), "b": _cell(1.0)},
    )
    chart = criterion_chart(1, compared, ["a", "b"])
    full = chart.bottom - chart.top
    a, b = chart.bars
    assert abs(float(a.height) - full / 2) < 0.2  # 3 is halfway up 1-5 (it would be 60% on 0-5)
    assert float(b.height) == STUB  # 1, the bottom of the scale: still drawn
    assert [t.text for t in chart.texts if t.anchor == "end"] == ["1", "2", "3", "4", "5"]
