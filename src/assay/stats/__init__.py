"""Statistics once: every estimator, interval, bootstrap and pairing rule the library uses.

Conventions, everywhere in this package:
- arguments are `(truth, predicted)`: the human labels (gold) first, the judge's scores or
  decisions second, as scikit-learn's `(y_true, y_score)`;
- a figure that is undefined on the data (one class only, no spread, no rows) is None, never NaN;
- a figure with an interval is an `Estimate` (value, low, high, n, method).

Modules:
- `estimate`       `Estimate`, `defined` (None for NaN/inf);
- `bootstrap`      the one seeded percentile bootstrap: `bootstrap` (any statistic, paired
                   columns, optionally stratified), `bootstrap_mean_ci` (a mean; of paired deltas,
                   a difference), `resample_indices`;
- `pairing`        the one pairing rule for two runs' rows (`pair_rows`: by id, else position;
                   rows in one run only are counted, never compared) and `paired_differences`
                   -> `Difference`;
- `proportion`     intervals of a proportion: `wilson`, `clopper_pearson` (exact), `proportion`,
                   `pairwise_accuracy` (ties 0.5);
- `classification` binary labels: `roc_auc`, `balanced_accuracy`, `f1_score`, `best_threshold`;
- `agreement`      categorical labels: `cohen_kappa` (unweighted, linear, quadratic),
                   `confusion_matrix`, `agreement` (exact-match rate), `json_key`;
- `correlation`    `pearson`, `spearman`, `kendall`, `mae`, `average_ranks`, Fisher-z intervals
                   (`with_fisher`);
- `calibration`    `brier`, `calibration_bins`, `expected_calibration_error`.
- `ppi`            `ppi_mean`: a human metric's mean from a few labels and many judge scores
                   (PPI++, power-tuned, optionally weighted), an `Estimate` (`PPIEstimate`);
- `columns`        what an estimator takes as a column: a sequence or a numpy array (`Numbers`,
                   `Labels`, `Values`, for annotations).

numpy is imported by the modules that compute over arrays; scipy only where noted (Kendall's tau,
the Wilson and Clopper-Pearson intervals, the t interval), from the extras that already need it.
"""

from assay.stats.estimate import Estimate
from assay.stats.ppi import PPIEstimate, ppi_mean

__all__ = ["Estimate", "PPIEstimate", "ppi_mean"]
