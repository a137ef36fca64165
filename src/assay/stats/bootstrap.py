"""The one bootstrap: seeded percentile intervals from resampling rows with replacement.

- `resample_indices`: the row indices of each resample, drawn from `numpy.random.default_rng(seed)`
  in chunks (bounded memory on long runs); with `strata`, each stratum (e.g. each class) is
  resampled on its own so every resample keeps its size.
- `bootstrap`: the percentile interval of any `statistic(*columns)` over those resamples, the
  columns resampled together (paired); resamples where the statistic is undefined (None/NaN)
  are left out and counted.
- `bootstrap_mean_ci`: the same resamples for the mean of one column, vectorised; with paired
  deltas (other - baseline per row) it is the paired bootstrap of a difference.

The same inputs and seed always give the same interval. numpy is imported when one is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from assay.stats.estimate import Estimate, defined

if TYPE_CHECKING:  # numpy's array types, for annotations only: `import assay` stays light
    from assay.stats.columns import Values

CONFIDENCE = 0.95
RESAMPLES = 5000
SEED = 0


def resample_indices(
    n: int,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    strata: Sequence[Any] | None = None,
) -> Iterator[Any]:
    """Chunks of resamples: 2-D integer arrays, one row of `n` row indices per resample."""
    import numpy as np

    rng = np.random.default_rng(seed)
    groups = [np.arange(n)]
    if strata is not None:
        keys = np.asarray(strata)
        groups = [np.flatnonzero(keys == key) for key in dict.fromkeys(keys.tolist())]
    chunk = max(1, min(resamples, 2_000_000 // max(1, n)))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        yield np.concatenate(
            [group[rng.integers(0, len(group), size=(size, len(group)))] for group in groups],
            axis=1,
        )


def _percentiles(values: Any, confidence: float) -> tuple[float, float]:
    import numpy as np

    alpha = 1 - confidence
    low, high = np.quantile(np.asarray(values, dtype=float), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile interval of the mean of `values` over `resamples` resamples."""
    import numpy as np

    column = np.asarray(values, dtype=float)
    means = [
        column[index].mean(axis=1)
        for index in resample_indices(len(column), resamples=resamples, seed=seed)
    ]
    return _percentiles(np.concatenate(means), confidence)


def bootstrap(
    statistic: Callable[..., float | None],
    columns: Sequence[Values],
    *,
    resamples: int = 2000,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    strata: Sequence[Any] | None = None,
) -> Estimate:
    """`statistic(*columns)` with its percentile interval over paired resamples of the rows
    (`strata`: resample each stratum on its own). No interval below two rows, when the value is
    undefined, or when no resample is defined."""
    import numpy as np

    arrays = [np.asarray(column) for column in columns]
    n = len(arrays[0]) if arrays else 0
    method = f"{'stratified ' if strata is not None else ''}bootstrap ({resamples}, seed {seed})"
    value = defined(statistic(*arrays)) if n else None
    if value is None or n < 2:
        return Estimate(value, None, None, n, method)
    found, undefined = [], 0
    for chunk in resample_indices(n, resamples=resamples, seed=seed, strata=strata):
        for index in chunk:
            one = defined(statistic(*(array[index] for array in arrays)))
            if one is None:
                undefined += 1
            else:
                found.append(one)
    if not found:
        return Estimate(value, None, None, n, method, undefined)
    low, high = _percentiles(found, confidence)
    return Estimate(value, low, high, n, method, undefined)


__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "bootstrap",
    "bootstrap_mean_ci",
    "resample_indices",
]
