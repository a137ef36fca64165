"""`AlignmentReport`: how far a judge agrees with human labels on held-out rows.

Which statistics apply depends on the labels: yes/no labels against a score get agreement,
balanced accuracy and Cohen's kappa at the threshold, ROC-AUC, Spearman and Kendall, and (for
scores in [0, 1]) Brier score, MAE, expected calibration error with its bins; ordinal labels get
exact agreement, quadratic-weighted kappa, Spearman, Kendall and MAE; numeric labels Spearman,
Kendall, Pearson and MAE; nominal labels agreement and kappa. Each has a paired bootstrap 95%
interval over rows, and with a `before` run on the same rows, so has each difference
(after - before). Rows whose score failed are counted by cause and left out of every statistic.

The statistics themselves are computed in `agreement.py`; reading a report's JSON back, with its
checks, is `report_json.py`; the HTML is `html.py`. This module holds the report's data model:
building it, its Ragas-style keys, JSON and the rich table.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.alignment.agreement import (
    CORRELATION,
    comparable_value,
    confusion,
    encode,
    statistics_for,
    worst_disagreements,
)
from assay.alignment.labels import LabeledSet
from assay.alignment.report_json import report_from_dict
from assay.alignment.scoring import LabelKind, RowScore, normalise_label
from assay.errors import DataError, UsageError
from assay.stats.agreement import category_order, json_key
from assay.stats.bootstrap import bootstrap
from assay.stats.calibration import calibration_bins
from assay.stats.estimate import Estimate


@dataclass
class AlignmentReport:
    metric: str
    kind: str
    n_rows: int
    n_scored: int
    threshold: float | None
    statistics: dict[str, Estimate]
    failures: dict[str, int] = field(default_factory=dict)
    before: dict[str, Estimate] | None = None
    before_threshold: float | None = None
    differences: dict[str, Estimate] | None = None
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
        kind: LabelKind,
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
        labels = [normalise_label(kind, example.label) for example in rows]
        values = [comparable_value(kind, score) for score in scores]
        failures = Counter(
            score.error_type or "NotComparable"
            for score, v in zip(scores, values, strict=True)
            if v is None
        )
        categories = sorted(
            {json_key(v): v for v in [*labels, *(v for v in values if v is not None)]}.values(),
            key=category_order,
        )
        kept = [i for i, v in enumerate(values) if v is not None]
        y, s = encode(kind, [labels[i] for i in kept], [values[i] for i in kept], categories)
        unit = bool(len(s)) and kind == "binary" and float(s.min()) >= 0 and float(s.max()) <= 1
        functions = statistics_for(kind, threshold, categories, unit)
        estimates = {
            name: bootstrap(fn, [y, s], resamples=n_resamples, seed=seed)
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
        report.confusion = confusion(kind, labels, values, threshold, categories)
        if unit:
            report.calibration = calibration_bins(y, s, n_bins)
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
        report.worst = worst_disagreements(kind, rows, labels, values, scores, threshold, top_n)
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
        before_values = [comparable_value(kind, score) for score in before]
        both = [
            i
            for i in range(len(labels))
            if after_values[i] is not None and before_values[i] is not None
        ]
        everything = [*categories, *(before_values[i] for i in both)]
        categories = sorted({json_key(v): v for v in everything}.values(), key=category_order)
        y, a = encode(kind, [labels[i] for i in both], [after_values[i] for i in both], categories)
        _, b = encode(kind, [labels[i] for i in both], [before_values[i] for i in both], categories)
        unit = (
            kind == "binary"
            and len(both) > 0
            and min(a.min(), b.min()) >= 0
            and max(a.max(), b.max()) <= 1
        )
        after_fns = statistics_for(kind, self.threshold, categories, unit)
        before_fns = statistics_for(kind, before_threshold, categories, unit)
        self.before_threshold = before_threshold
        self.n_paired = len(both)
        self.before_confusion = confusion(kind, labels, before_values, before_threshold, categories)
        usable = [i for i, v in enumerate(before_values) if v is not None]
        yb, sb = encode(
            kind, [labels[i] for i in usable], [before_values[i] for i in usable], categories
        )
        if kind == "binary" and len(sb) and float(sb.min()) >= 0 and float(sb.max()) <= 1:
            self.before_calibration = calibration_bins(yb, sb, len(self.calibration or []) or 10)
        self.before = {
            name: bootstrap(fn, [y, b], resamples=n_resamples, seed=seed)
            for name, fn in before_fns.items()
        }
        self.differences = {}
        for name in after_fns:
            fa, fb = after_fns[name], before_fns[name]
            self.differences[name] = bootstrap(
                lambda yy, aa, bb, fa=fa, fb=fb: _minus(fa(yy, aa), fb(yy, bb)),
                [y, a, b],
                resamples=n_resamples,
                seed=seed,
            )

    # -- reading -------------------------------------------------------------------------------
    def value(self, name: str) -> float | None:
        estimate = self.statistics.get(name)
        return estimate.value if estimate else None

    def __getitem__(self, key: str) -> Any:
        """Ragas' `validate_alignment` keys: correlation, agreement_rate, df."""
        if key == "correlation":
            return self.value(CORRELATION[self.kind])
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
        def block(values: dict[str, Estimate] | None) -> Any:
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
        return report_from_dict(cls, data, source)

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


def _minus(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def _cell(estimate: Estimate | None, signed: bool = False) -> str:
    if estimate is None or estimate.value is None:
        return "n/a"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    text = fmt.format(estimate.value)
    if estimate.low is not None and estimate.high is not None:
        text += f" [{fmt.format(estimate.low)}, {fmt.format(estimate.high)}]"
    return text


__all__ = ["AlignmentReport"]
