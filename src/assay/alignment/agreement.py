"""The statistics behind `AlignmentReport`, computed from labels and judge values row by row.

Which statistics apply to which label kind (and the one Ragas calls "correlation"), how labels
and values become numeric columns, which judge values can be compared at all, the confusion
matrix and the worst disagreements. Pure functions over plain lists and arrays, kept apart from
the report's data model (`report.py`); the estimators themselves are `assay.stats`' (arguments
human labels first; an undefined statistic is None).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.alignment.labels import LabeledSet
from assay.alignment.scoring import RowScore, numeric_value
from assay.stats.agreement import cohen_kappa, confusion_matrix, json_key
from assay.stats.calibration import brier, expected_calibration_error
from assay.stats.classification import balanced_accuracy, roc_auc
from assay.stats.correlation import kendall, mae, pearson, spearman

# The statistic Ragas' `validate_alignment` calls "correlation", by label kind.
CORRELATION = {
    "binary": "kappa",
    "nominal": "kappa",
    "ordinal": "weighted_kappa",
    "numeric": "pearson",
    "ranking": "kendall",
}


def statistics_for(
    kind: str, threshold: float | None, categories: list[Any], unit: bool
) -> dict[str, Callable[..., float | None]]:
    """name -> statistic(labels, values) over numeric columns."""
    if kind == "binary":
        t = 0.5 if threshold is None else threshold
        found: dict[str, Callable[..., float | None]] = {
            "agreement": lambda y, s: float(np.mean((s >= t) == (y == 1))),
            "balanced_accuracy": lambda y, s: balanced_accuracy(y, s >= t),
            "kappa": lambda y, s: cohen_kappa(y.tolist(), (s >= t).astype(int).tolist(), [0, 1]),
            "roc_auc": roc_auc,
            "spearman": spearman,
            "kendall": kendall,
        }
        if unit:
            found |= {
                "brier": brier,
                "mae": mae,
                "ece": expected_calibration_error,
            }
        return found
    if kind == "ordinal":
        return {
            "agreement": lambda y, s: float(np.mean(y == s)),
            "weighted_kappa": lambda y, s: cohen_kappa(
                y.tolist(), s.tolist(), categories, "quadratic"
            ),
            "spearman": spearman,
            "kendall": kendall,
            "mae": mae,
        }
    if kind == "numeric":
        return {
            "spearman": spearman,
            "kendall": kendall,
            "pearson": pearson,
            "mae": mae,
        }
    if kind == "nominal":
        codes = list(range(len(categories)))
        return {
            "agreement": lambda y, s: float(np.mean(y == s)),
            "kappa": lambda y, s: cohen_kappa(y.tolist(), s.tolist(), codes),
        }
    if kind == "ranking":
        return _ranking_statistics(categories)
    return {"agreement": lambda y, s: float(np.mean(y == s))}


def _ranking_statistics(rankings: list[Any]) -> dict[str, Callable[..., float | None]]:
    """Columns hold codes into `rankings` (each a list, best first). Exact agreement, agreement
    on the first item, and the mean over rows of Kendall's tau between the two orders of the
    items both rank (a row with fewer than two such items, or a constant order, counts as
    undefined and is left out of the mean)."""
    tau: dict[tuple[int, int], float | None] = {}

    def row_tau(a: int, b: int) -> float | None:
        if (a, b) not in tau:
            human, judge = rankings[a], rankings[b]
            shared = [item for item in human if item in judge]
            tau[a, b] = kendall(range(len(shared)), [judge.index(item) for item in shared])
        return tau[a, b]

    def first(a: int, b: int) -> bool:
        return bool(rankings[a]) and bool(rankings[b]) and rankings[a][0] == rankings[b][0]

    def mean_tau(y: np.ndarray, s: np.ndarray) -> float | None:
        found = [row_tau(int(a), int(b)) for a, b in zip(y, s, strict=True)]
        values = [value for value in found if value is not None]
        return float(np.mean(values)) if values else None

    return {
        "agreement": lambda y, s: float(np.mean(y == s)),
        "top1_agreement": lambda y, s: float(
            np.mean([first(int(a), int(b)) for a, b in zip(y, s, strict=True)])
        ),
        "kendall": mean_tau,
    }


@dataclass
class Columns:
    """Numeric columns for the rows scored: labels and values (codes for nominal kinds)."""

    ids: list[str]
    labels: np.ndarray
    values: np.ndarray
    categories: list[Any]


def encode(
    kind: str, labels: list[Any], values: list[Any], categories: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    if kind in ("nominal", "ranking"):
        index = {json_key(c): i for i, c in enumerate(categories)}
        return (
            np.array([index[json_key(v)] for v in labels], dtype=float),
            np.array([index.get(json_key(v), -1) for v in values], dtype=float),
        )
    return np.array(labels, dtype=float), np.array(values, dtype=float)


def comparable_value(kind: str, score: RowScore) -> Any:
    """The value to compare, or None when the row cannot be compared (failed or not a number)."""
    if not score.ok:
        return None
    if kind in ("binary", "ordinal", "numeric"):
        return numeric_value(score.value)
    return score.value


def confusion(
    kind: str, labels: list[Any], values: list[Any], threshold: float | None, categories: list[Any]
) -> dict[str, Any] | None:
    """The confusion matrix (rows: human, columns: judge) over the rows that scored; yes/no
    labels against a score are read at the threshold."""
    kept = [i for i, v in enumerate(values) if v is not None]
    if kind not in ("binary", "nominal", "ordinal") or not kept:
        return None
    if kind == "binary":
        t = 0.5 if threshold is None else threshold
        judged: list[Any] = [int(values[i] >= t) for i in kept]
        shown = [0, 1]
    else:
        judged = [values[i] for i in kept]
        shown = categories
    matrix = confusion_matrix([labels[i] for i in kept], judged, shown)
    return {"categories": shown, "matrix": matrix.tolist(), "rows": "human", "columns": "judge"}


def worst_disagreements(
    kind: str,
    rows: LabeledSet,
    labels: list[Any],
    values: list[Any],
    scores: Sequence[RowScore],
    threshold: float | None,
    top_n: int,
) -> list[dict[str, Any]]:
    """The rows where the judge is furthest from the person, with both sides' reasons."""
    gaps = []
    for i, value in enumerate(values):
        if value is None:
            continue
        if kind in ("binary", "ordinal", "numeric"):
            gap = abs(float(value) - float(labels[i]))
            if kind == "binary":
                t = 0.5 if threshold is None else threshold
                if int(value >= t) == labels[i]:
                    continue
        else:
            if json_key(value) == json_key(labels[i]):
                continue
            gap = 1.0
        gaps.append((gap, i))
    gaps.sort(key=lambda item: (-item[0], item[1]))
    worst = []
    for gap, i in gaps[:top_n]:
        example = rows[i]
        worst.append(
            {
                "id": example.id,
                "gap": gap,
                "inputs": {name: _short(value) for name, value in example.fields.items()},
                "human_label": labels[i],
                "human_reason": example.reason,
                "judge_value": values[i],
                "judge_reason": scores[i].reason,
            }
        )
    return worst


def _short(value: Any, limit: int = 300) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
