"""The known answer: RAGChecker's own scores reproduce the paper's Pearson correlations."""

from __future__ import annotations

from assay.benchmark.loaders import load_ragchecker, ragchecker_baseline_scores
from assay.benchmark.scoring import score_suite


def test_ragchecker_baseline_reproduces_the_paper(metaeval_dir):
    # Per instance: delta = score(model2) - score(model1), paired with each of the two annotators'
    # labels (one row per annotator, 560 rows), Pearson r per label kind.
    data = load_ragchecker(metaeval_dir, split="all")
    scored = score_suite(data, ragchecker_baseline_scores(metaeval_dir, data))
    figures = {figure.name: figure.estimate for figure in scored.figures}
    assert round(figures["pearson_correctness"].value, 3) == 0.497
    assert round(figures["pearson_completeness"].value, 3) == 0.607
    assert round(figures["pearson_overall"].value, 3) == 0.619
    assert scored.n_scored == scored.n_units == 280
    # intervals use the 280 instances, not the 560 duplicated rows
    assert figures["pearson_overall"].n == 280
    assert figures["pearson_overall"].low < 0.619 < figures["pearson_overall"].high
