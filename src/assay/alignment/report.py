"""`AlignmentReport`: how far a judge agrees with human labels on held-out rows.

Which statistics apply depends on the labels: yes/no labels against a score get agreement,
balanced accuracy and Cohen's kappa at the threshold, ROC-AUC, Spearman and Kendall, and (for
scores in [0, 1]) Brier score, MAE, expected calibration error with its bins; ordinal labels get
exact agreement, quadratic-weighted kappa, Spearman, Kendall and MAE; numeric labels Spearman,
Kendall, Pearson and MAE; nominal labels agreement and kappa. Each has a paired bootstrap 95%
interval over rows, and with a `before` run on the same rows, so has each difference
(after - before). Rows whose score failed are counted by cause and left out of every statistic.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.alignment import stats as st
from assay.alignment.labels import LabeledSet
from assay.alignment.scoring import RowScore, normalise_label, numeric_value
from assay.errors import DataError, UsageError

# The statistic Ragas' `validate_alignment` calls "correlation", by label kind.
_CORRELATION = {
    "binary": "kappa",
    "nominal": "kappa",
    "ordinal": "weighted_kappa",
    "numeric": "pearson",
    "ranking": "kendall",
}


def _statistics(
    kind: str, threshold: float | None, categories: list[Any], unit: bool
) -> dict[str, Callable[..., float]]:
    """name -> statistic(labels, values) over numeric columns."""
    if kind == "binary":
        t = 0.5 if threshold is None else threshold
        found: dict[str, Callable[..., float]] = {
            "agreement": lambda y, s: float(np.mean((s >= t) == (y == 1))),
            "balanced_accuracy": lambda y, s: st.balanced_accuracy(y, (s >= t).astype(float)),
            "kappa": lambda y, s: st.cohen_kappa(y.tolist(), (s >= t).astype(int).tolist(), [0, 1]),
            "roc_auc": st.roc_auc,
            "spearman": st.spearman,
            "kendall": st.kendall,
        }
        if unit:
            found |= {
                "brier": st.brier,
                "mae": st.mae,
                "ece": st.expected_calibration_error,
            }
        return found
    if kind == "ordinal":
        return {
            "agreement": lambda y, s: float(np.mean(y == s)),
            "weighted_kappa": lambda y, s: st.cohen_kappa(
                y.tolist(), s.tolist(), categories, "quadratic"
            ),
            "spearman": st.spearman,
            "kendall": st.kendall,
            "mae": st.mae,
        }
    if kind == "numeric":
        return {
            "spearman": st.spearman,
            "kendall": st.kendall,
            "pearson": st.pearson,
            "mae": st.mae,
        }
    if kind == "nominal":
        codes = list(range(len(categories)))
        return {
            "agreement": lambda y, s: float(np.mean(y == s)),
            "kappa": lambda y, s: st.cohen_kappa(y.tolist(), s.tolist(), codes),
        }
    if kind == "ranking":
        return _ranking_statistics(categories)
    return {"agreement": lambda y, s: float(np.mean(y == s))}


def _ranking_statistics(rankings: list[Any]) -> dict[str, Callable[..., float]]:
    """Columns hold codes into `rankings` (each a list, best first). Exact agreement, agreement
    on the first item, and the mean over rows of Kendall's tau between the two orders of the
    items both rank (a row with fewer than two such items, or a constant order, counts as
    undefined and is left out of the mean)."""
    tau: dict[tuple[int, int], float] = {}

    def row_tau(a: int, b: int) -> float:
        if (a, b) not in tau:
            human, judge = rankings[a], rankings[b]
            shared = [item for item in human if item in judge]
            if len(shared) < 2:
                tau[a, b] = float("nan")
            else:
                tau[a, b] = st.kendall(
                    np.arange(len(shared)), np.array([judge.index(item) for item in shared])
                )
        return tau[a, b]

    def first(a: int, b: int) -> bool:
        return bool(rankings[a]) and bool(rankings[b]) and rankings[a][0] == rankings[b][0]

    def mean_tau(y: np.ndarray, s: np.ndarray) -> float:
        values = np.array([row_tau(int(a), int(b)) for a, b in zip(y, s, strict=True)])
        values = values[np.isfinite(values)]
        return float(values.mean()) if len(values) else float("nan")

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


def _encode(
    kind: str, labels: list[Any], values: list[Any], categories: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    if kind in ("nominal", "ranking"):
        index = {st.json_key(c): i for i, c in enumerate(categories)}
        return (
            np.array([index[st.json_key(v)] for v in labels], dtype=float),
            np.array([index.get(st.json_key(v), -1) for v in values], dtype=float),
        )
    return np.array(labels, dtype=float), np.array(values, dtype=float)


def _usable(kind: str, score: RowScore) -> Any:
    """The value to compare, or None when the row cannot be compared (failed or not a number)."""
    if not score.ok:
        return None
    if kind in ("binary", "ordinal", "numeric"):
        return numeric_value(score.value)
    return score.value


def _short(value: Any, limit: int = 300) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class AlignmentReport:
    metric: str
    kind: str
    n_rows: int
    n_scored: int
    threshold: float | None
    statistics: dict[str, st.Estimate]
    failures: dict[str, int] = field(default_factory=dict)
    before: dict[str, st.Estimate] | None = None
    before_threshold: float | None = None
    differences: dict[str, st.Estimate] | None = None
    n_paired: int | None = None
    confusion: dict[str, Any] | None = None
    calibration: list[dict[str, Any]] | None = None
    before_confusion: dict[str, Any] | None = None
    before_calibration: list[dict[str, Any]] | None = None
    worst: list[dict[str, Any]] = field(default_factory=list)
    judge_calls: int = 0
    n_resamples: int = 2000
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the held-out rows' source said

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        *,
        metric: str,
        kind: str,
        rows: LabeledSet,
        scores: Sequence[RowScore],
        threshold: float | None,
        before: Sequence[RowScore] | None = None,
        before_threshold: float | None = None,
        judge_calls: int = 0,
        n_resamples: int = 2000,
        seed: int = 0,
        top_n: int = 5,
        n_bins: int = 10,
    ) -> AlignmentReport:
        labels = [normalise_label(kind, example.label) for example in rows]  # type: ignore[arg-type]
        values = [_usable(kind, score) for score in scores]
        failures = Counter(
            score.error_type or "NotComparable"
            for score, v in zip(scores, values, strict=True)
            if v is None
        )
        categories = sorted(
            {st.json_key(v): v for v in [*labels, *(v for v in values if v is not None)]}.values(),
            key=st._order,
        )
        kept = [i for i, v in enumerate(values) if v is not None]
        y, s = _encode(kind, [labels[i] for i in kept], [values[i] for i in kept], categories)
        unit = bool(len(s)) and kind == "binary" and float(s.min()) >= 0 and float(s.max()) <= 1
        functions = _statistics(kind, threshold, categories, unit)
        estimates = {
            name: st.with_interval(fn, [y, s], n_resamples=n_resamples, seed=seed)
            for name, fn in functions.items()
        }
        report = cls(
            metric=metric,
            kind=kind,
            n_rows=len(rows),
            n_scored=len(kept),
            threshold=threshold,
            statistics=estimates,
            failures=dict(failures),
            judge_calls=judge_calls,
            n_resamples=n_resamples,
            notes=list(getattr(rows, "notes", [])),
        )
        report.confusion = _confusion(kind, labels, values, threshold, categories)
        if unit:
            report.calibration = st.calibration_bins(y, s, n_bins)
        if before is not None:
            report._compare(
                kind, labels, values, before, before_threshold, categories, n_resamples, seed
            )
        report.rows = [
            {
                "id": example.id,
                "label": labels[i],
                "value": values[i],
                "error": None if scores[i].ok else f"{scores[i].error_type}: {scores[i].error}",
            }
            for i, example in enumerate(rows)
        ]
        report.worst = _worst(kind, rows, labels, values, scores, threshold, top_n)
        return report

    def _compare(
        self,
        kind: str,
        labels: list[Any],
        after_values: list[Any],
        before: Sequence[RowScore],
        before_threshold: float | None,
        categories: list[Any],
        n_resamples: int,
        seed: int,
    ) -> None:
        before_values = [_usable(kind, score) for score in before]
        both = [
            i
            for i in range(len(labels))
            if after_values[i] is not None and before_values[i] is not None
        ]
        everything = [*categories, *(before_values[i] for i in both)]
        categories = sorted({st.json_key(v): v for v in everything}.values(), key=st._order)
        y, a = _encode(kind, [labels[i] for i in both], [after_values[i] for i in both], categories)
        _, b = _encode(
            kind, [labels[i] for i in both], [before_values[i] for i in both], categories
        )
        unit = (
            kind == "binary"
            and len(both) > 0
            and min(a.min(), b.min()) >= 0
            and max(a.max(), b.max()) <= 1
        )
        after_fns = _statistics(kind, self.threshold, categories, unit)
        before_fns = _statistics(kind, before_threshold, categories, unit)
        self.before_threshold = before_threshold
        self.n_paired = len(both)
        self.before_confusion = _confusion(
            kind, labels, before_values, before_threshold, categories
        )
        usable = [i for i, v in enumerate(before_values) if v is not None]
        yb, sb = _encode(
            kind, [labels[i] for i in usable], [before_values[i] for i in usable], categories
        )
        if kind == "binary" and len(sb) and float(sb.min()) >= 0 and float(sb.max()) <= 1:
            self.before_calibration = st.calibration_bins(yb, sb, len(self.calibration or []) or 10)
        self.before = {
            name: st.with_interval(fn, [y, b], n_resamples=n_resamples, seed=seed)
            for name, fn in before_fns.items()
        }
        self.differences = {}
        for name in after_fns:
            fa, fb = after_fns[name], before_fns[name]
            self.differences[name] = st.with_interval(
                lambda yy, aa, bb, fa=fa, fb=fb: fa(yy, aa) - fb(yy, bb),
                [y, a, b],
                n_resamples=n_resamples,
                seed=seed,
            )

    # -- reading -------------------------------------------------------------------------------
    def value(self, name: str) -> float | None:
        estimate = self.statistics.get(name)
        return estimate.value if estimate else None

    def __getitem__(self, key: str) -> Any:
        """Ragas' `validate_alignment` keys: correlation, agreement_rate, df."""
        if key == "correlation":
            return self.value(_CORRELATION[self.kind])
        if key == "agreement_rate":
            return self.value("agreement")
        if key == "df":
            return self.to_pandas()
        if key in self.statistics:
            return self.value(key)
        raise KeyError(key)

    def to_pandas(self) -> Any:
        from assay._util.deps import require

        pandas = require("pandas", extra="pandas", feature="AlignmentReport.to_pandas")
        return pandas.DataFrame(self.rows)

    def to_dict(self) -> dict[str, Any]:
        def block(values: dict[str, st.Estimate] | None) -> Any:
            return None if values is None else {k: v.to_dict() for k, v in values.items()}

        # a copy: a caller editing the dict never edits the report
        return copy.deepcopy(
            {
                "metric": self.metric,
                "label_kind": self.kind,
                "rows": self.n_rows,
                "rows_scored": self.n_scored,
                "failures": self.failures,
                "threshold": self.threshold,
                "statistics": block(self.statistics),
                "before": block(self.before),
                "before_threshold": self.before_threshold,
                "differences": block(self.differences),
                "rows_paired": self.n_paired,
                "confusion": self.confusion,
                "calibration_bins": self.calibration,
                "before_confusion": self.before_confusion,
                "before_calibration_bins": self.before_calibration,
                "worst_disagreements": self.worst,
                "judge_calls": self.judge_calls,
                "bootstrap": {
                    "resamples": self.n_resamples,
                    "confidence": 0.95,
                    "method": "percentile",
                },
                "per_row": self.rows,
                "notes": self.notes,
            }
        )

    @classmethod
    def from_dict(cls, data: Any, source: str = "the alignment report") -> AlignmentReport:
        """The report `to_dict()` / `to_json()` gave, read back (a field that is missing or of
        the wrong type is a DataError naming it)."""
        return _from_dict(cls, data, source)

    @classmethod
    def load(cls, path: str | Path) -> AlignmentReport:
        """A report from a JSON file: what `to_json(path)` or `assay align --report` wrote, or the
        aligned file `assay align -o` wrote (which carries its held-out report under "report")."""
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot read the alignment report {source}: {exc}") from None
        except ValueError as exc:
            raise DataError(f"not JSON: {exc}", file=str(source)) from None
        if isinstance(data, dict) and "statistics" not in data and "alignment" in data:
            if not isinstance(data.get("report"), dict):
                raise UsageError(
                    f"{source} is an aligned state without a held-out report; write one with "
                    "`assay align ... --report report.json` (or report.to_json(path)) and give that"
                )
            data = data["report"]
        return cls.from_dict(data, str(source))

    def __html__(self) -> str:
        """The report as an HTML section, so a page template (the `assay report` page, a notebook)
        embeds it as markup rather than escaping it."""
        from assay.alignment.html import render_report

        return render_report(self, section=True)

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    def table(self) -> Any:
        """A rich Table: each statistic with its interval, and before/difference when compared."""
        from rich.table import Table

        covered = f"{self.n_scored} of {self.n_rows} rows"
        title = f"{self.metric}: agreement with human labels ({covered}"
        title += f", threshold {self.threshold:.3g})" if self.threshold is not None else ")"
        table = Table(title=title)
        table.add_column("statistic")
        if self.before is not None:
            table.add_column("before", justify="right")
        table.add_column("value [95% CI]", justify="right")
        if self.differences is not None:
            table.add_column("difference [95% CI]", justify="right")
        for name, estimate in self.statistics.items():
            cells = [name]
            if self.before is not None:
                cells.append(_cell(self.before.get(name)))
            cells.append(_cell(estimate))
            if self.differences is not None:
                cells.append(_cell(self.differences.get(name), signed=True))
            table.add_row(*cells)
        return table

    def to_html(self, path: str | Path | None = None) -> str:
        from assay.alignment.html import render_report

        page = render_report(self)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page


def _confusion(
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
    matrix = st.confusion_matrix([labels[i] for i in kept], judged, shown)
    return {"categories": shown, "matrix": matrix.tolist(), "rows": "human", "columns": "judge"}


def _estimates(block: Any, where: str, source: str) -> dict[str, st.Estimate] | None:
    if block is None:
        return None
    if not isinstance(block, dict):
        raise DataError(f"{where} must be an object of statistics", file=source, field=where)
    found = {}
    for name, item in block.items():
        try:
            found[name] = st.Estimate(
                value=item["value"],
                low=item.get("low"),
                high=item.get("high"),
                n=int(item.get("n", 0)),
                degenerate_resamples=int(item.get("degenerate_resamples", 0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise DataError(
                f"{where}.{name} must be an object with value, low, high and n",
                file=source,
                field=f"{where}.{name}",
            ) from None
    return found


def _from_dict(cls: type[AlignmentReport], data: Any, source: str) -> AlignmentReport:
    if not isinstance(data, dict):
        raise DataError("an alignment report is a JSON object", file=source)
    data = copy.deepcopy(data)  # the report never shares the caller's lists
    for key in ("metric", "label_kind", "rows", "rows_scored", "statistics"):
        if key not in data:
            raise DataError(f"not an alignment report: no {key!r}", file=source, field=key)
    if data["label_kind"] not in _CORRELATION:
        raise DataError(
            f"label_kind must be one of {sorted(_CORRELATION)}, got {data['label_kind']!r}",
            file=source,
            field="label_kind",
        )
    for key in ("confusion", "before_confusion"):
        matrix = data.get(key)
        if matrix is not None and (
            not isinstance(matrix, dict)
            or not isinstance(matrix.get("categories"), list)
            or not isinstance(matrix.get("matrix"), list)
            or len(matrix["matrix"]) != len(matrix["categories"])
            or any(
                not isinstance(row, list) or len(row) != len(matrix["categories"])
                for row in matrix["matrix"]
            )
        ):
            raise DataError(
                f"{key} must hold categories and a square matrix of as many rows",
                file=source,
                field=key,
            )
    for key in ("calibration_bins", "before_calibration_bins"):
        bins = data.get(key)
        if bins is not None and (
            not isinstance(bins, list)
            or any(
                not isinstance(b, dict) or not {"n", "mean_score", "positive_rate"} <= set(b)
                for b in bins
            )
        ):
            raise DataError(
                f"{key} must be a list of bins with n, mean_score and positive_rate",
                file=source,
                field=key,
            )
    worst = data.get("worst_disagreements") or []
    if not isinstance(worst, list) or any(not isinstance(w, dict) for w in worst):
        raise DataError("worst_disagreements must be a list of objects", file=source)
    bootstrap = data.get("bootstrap") or {}
    return cls(
        metric=str(data["metric"]),
        kind=data["label_kind"],
        n_rows=int(data["rows"]),
        n_scored=int(data["rows_scored"]),
        threshold=data.get("threshold"),
        statistics=_estimates(data["statistics"], "statistics", source) or {},
        failures=dict(data.get("failures") or {}),
        before=_estimates(data.get("before"), "before", source),
        before_threshold=data.get("before_threshold"),
        differences=_estimates(data.get("differences"), "differences", source),
        n_paired=data.get("rows_paired"),
        confusion=data.get("confusion"),
        calibration=data.get("calibration_bins"),
        before_confusion=data.get("before_confusion"),
        before_calibration=data.get("before_calibration_bins"),
        worst=[
            {
                "id": w.get("id"),
                "gap": w.get("gap"),
                "inputs": dict(w.get("inputs") or {}),
                "human_label": w.get("human_label"),
                "human_reason": w.get("human_reason"),
                "judge_value": w.get("judge_value"),
                "judge_reason": w.get("judge_reason"),
            }
            for w in worst
        ],
        judge_calls=int(data.get("judge_calls") or 0),
        n_resamples=int(bootstrap.get("resamples", 2000)),
        rows=list(data.get("per_row") or []),
        notes=[str(note) for note in data.get("notes") or []],
    )


def _cell(estimate: st.Estimate | None, signed: bool = False) -> str:
    if estimate is None or estimate.value is None:
        return "n/a"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    text = fmt.format(estimate.value)
    if estimate.low is not None and estimate.high is not None:
        text += f" [{fmt.format(estimate.low)}, {fmt.format(estimate.high)}]"
    return text


def _worst(
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
            if st.json_key(value) == st.json_key(labels[i]):
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


__all__ = ["AlignmentReport"]
