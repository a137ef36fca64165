"""Agreement between two labellings of the same rows (human first, judge second).

- `json_key`: one key per category, so 1, 1.0, True and numpy's 1.0 are the same category;
- `confusion_matrix(truth, predicted, categories)`: rows human, columns judge;
- `agreement(truth, predicted)`: the exact-match rate;
- `cohen_kappa(truth, predicted, categories, weights)`: 1 - sum(w*O) / sum(w*E), E the product
  of the margins; weights None (every disagreement counts 1), "linear" or "quadratic" (distance
  between category positions, as scikit-learn's `cohen_kappa_score`). None when undefined (no
  rows, or chance agreement is total: one category everywhere).

numpy only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.stats.columns import Values

WEIGHTS = (None, "linear", "quadratic")


def json_key(value: Any) -> str:
    """One key per category: 1, 1.0 and numpy's 1.0 are the same category."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        value = int(number) if number.is_integer() else number
    return json.dumps(value, sort_keys=True, default=str)


def category_order(value: Any) -> tuple[int, Any]:
    """Sort key for categories: numbers by value, then everything else by its text."""
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def categories_of(*labellings: Values) -> list[Any]:
    """The distinct categories of the labellings, in `category_order`."""
    found = {json_key(value): value for labels in labellings for value in labels}
    return sorted(found.values(), key=category_order)


def confusion_matrix(truth: Values, predicted: Values, categories: Sequence[Any]) -> Any:
    """Rows: human label; columns: judge; in the order of `categories`."""
    index = {json_key(c): i for i, c in enumerate(categories)}
    matrix = np.zeros((len(categories), len(categories)), dtype=int)
    for label, prediction in zip(truth, predicted, strict=True):
        matrix[index[json_key(label)], index[json_key(prediction)]] += 1
    return matrix


def agreement(truth: Values, predicted: Values) -> float | None:
    """Share of rows where the two labels are the same category; None without rows."""
    same = [json_key(a) == json_key(b) for a, b in zip(truth, predicted, strict=True)]
    return float(np.mean(same)) if same else None


def cohen_kappa(
    truth: Values,
    predicted: Values,
    categories: Sequence[Any] | None = None,
    weights: str | None = None,
) -> float | None:
    """Cohen's kappa (see the module docstring); `categories` defaults to `categories_of`."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if categories is None:
        categories = categories_of(truth, predicted)
    observed = confusion_matrix(truth, predicted, categories).astype(float)
    n = observed.sum()
    if n == 0:
        return None
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    positions = np.arange(len(categories))
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    w = {None: (distance > 0).astype(float), "linear": distance, "quadratic": distance**2}[weights]
    denominator = (w * expected).sum()
    if denominator == 0:
        return None
    return float(1 - (w * observed).sum() / denominator)


__all__ = [
    "agreement",
    "categories_of",
    "category_order",
    "cohen_kappa",
    "confusion_matrix",
    "json_key",
]
