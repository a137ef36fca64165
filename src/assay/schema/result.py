"""`EvaluationResult`: every cell's outcome, and aggregates that say how many rows they cover."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util.deps import require
from assay.errors import UsageError
from assay.schema.aggregate import aggregate
from assay.schema.dataset import EvaluationDataset, atomic_open, json_line
from assay.schema.outcome import Error, Ok, Outcome
from assay.schema.stability import Stability, stability_of
from assay.schema.usage import Usage

RESULT_FORMAT_VERSION = 1


@dataclass(frozen=True)
class MetricSummary:
    """One metric's aggregate over a run. `mean` is over `ok` cells only; `coverage` says how many."""

    name: str
    n_rows: int
    n_ok: int
    n_skipped: int
    n_error: int
    mean: float | None
    labels: dict[str, int] = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        return self.n_ok / self.n_rows if self.n_rows else 0.0

    def coverage_text(self) -> str:
        return f"{self.n_ok}/{self.n_rows}"


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


class EvaluationResult:
    """The outcome of `evaluate()`: a grid of typed outcomes, rows x metrics."""

    def __init__(
        self,
        dataset: EvaluationDataset,
        metric_specs: list[dict[str, Any]],
        outcomes: list[dict[str, Outcome]],
        *,
        usages: list[dict[str, Usage]] | None = None,
        seconds: float = 0.0,
        run_dir: str | None = None,
        experiment_name: str | None = None,
        sent: Usage | None = None,
        whole_run: Usage | None = None,
        resumed_cells: int = 0,
    ) -> None:
        if len(outcomes) != len(dataset):
            raise ValueError("one outcome row per dataset row is required")
        self.experiment_name = experiment_name
        self.run_id = uuid.uuid4()
        self.dataset = dataset
        self.metric_specs = metric_specs
        self.metric_names = [spec["name"] for spec in metric_specs]
        self.outcomes = outcomes
        self.usages = usages if usages is not None else [{} for _ in outcomes]
        self.seconds = seconds
        self.run_dir = run_dir
        self._sent = sent
        self._whole_run = whole_run
        # Cells read back from the run directory, scored by an earlier invocation.
        self.resumed_cells = resumed_cells

    @property
    def n_rows(self) -> int:
        return len(self.dataset)

    # -- per cell ------------------------------------------------------------------------
    def outcome(self, row: int, metric: str) -> Outcome:
        self._check_metric(metric)
        return self.outcomes[row][metric]

    def __getitem__(self, metric: str) -> list[Any]:
        """The value per row for `metric`; None where the cell was skipped or failed."""
        self._check_metric(metric)
        return [
            cell.value if isinstance(cell, Ok) else None
            for cell in (row[metric] for row in self.outcomes)
        ]

    def errors(self) -> list[tuple[int, str, Error]]:
        """Every failed cell as (row, metric, error)."""
        return [
            (row, name, cell)
            for row, cells in enumerate(self.outcomes)
            for name, cell in cells.items()
            if isinstance(cell, Error)
        ]

    def stability(self) -> list[Stability]:
        """Per metric, how its cells asked several times (`repeats=N`) agreed with themselves."""
        return [
            stability_of(name, (row[name] for row in self.outcomes if name in row))
            for name in self.metric_names
        ]

    def _check_metric(self, metric: str) -> None:
        if metric not in self.metric_names:
            raise UsageError(
                f"no metric {metric!r} in this result; it has {', '.join(self.metric_names)}"
            )

    # -- usage and cost ----------------------------------------------------------------------
    def usage(self, metric: str | None = None) -> Usage:
        """Tokens, requests and cost summed over the run, or over one metric's cells."""
        if metric is not None:
            self._check_metric(metric)
        total = Usage()
        for row in self.usages:
            for name, usage in row.items():
                if metric is None or name == metric:
                    total = total + usage
        return total

    def sent_usage(self) -> Usage:
        """What the model calls made by this invocation used. A resumed run's cells read back from
        its run directory were paid for by an earlier one, so they count in `usage()`, not here."""
        return self._sent if self._sent is not None else self.usage()

    def whole_run_usage(self) -> Usage:
        """What the run cost over every invocation on its run directory: the cells kept, and the
        attempts that failed and were tried again (a cell's calls are saved when it finishes, so
        calls of cells cut off by an interruption are not in it)."""
        return self._whole_run if self._whole_run is not None else self.sent_usage()

    def total_tokens(self) -> Usage:
        """Ragas' name for the run's usage (input and output tokens, requests, cost)."""
        return self.usage()

    def total_cost(
        self,
        cost_per_input_token: float | None = None,
        cost_per_output_token: float | None = None,
        per_model_costs: Mapping[str, tuple[float, float]] | None = None,
    ) -> float:
        """USD spent. By default the cost recorded per call (from the model price table). With
        per-token prices, recomputed from the token counts: `per_model_costs` maps a model name
        (`"gpt-4o"` or `"openai/gpt-4o"`) to its (input, output) price per token, and a cell's
        tokens are charged at the price of its metric's judge model (embedding tokens included);
        cells of other models use `cost_per_input_token` / `cost_per_output_token` when given, else
        their recorded cost. Cached requests are free either way."""
        prices = _check_prices(per_model_costs)
        if cost_per_input_token is None and cost_per_output_token is None and not prices:
            return self.usage().cost
        models = {spec["name"]: _model_names(spec.get("llm")) for spec in self.metric_specs}
        fallback = None
        if cost_per_input_token is not None or cost_per_output_token is not None:
            fallback = (cost_per_input_token or 0.0, cost_per_output_token or 0.0)
        total = 0.0
        for row in self.usages:
            for name, usage in row.items():
                price = next(
                    (prices[model] for model in models.get(name, ()) if model in prices), fallback
                )
                total += (
                    usage.cost
                    if price is None
                    else usage.input_tokens * price[0] + usage.output_tokens * price[1]
                )
        return total

    # -- aggregates ------------------------------------------------------------------------
    def summary(self, metric: str) -> MetricSummary:
        self._check_metric(metric)
        cells = [row[metric] for row in self.outcomes]
        oks = [cell for cell in cells if isinstance(cell, Ok)]
        labels = Counter(cell.value for cell in oks if isinstance(cell.value, str))
        # One rule for every surface (results, report, experiments): pass/fail labels count 1/0.
        mean = aggregate(cell.value if isinstance(cell, Ok) else None for cell in cells).mean
        return MetricSummary(
            name=metric,
            n_rows=len(cells),
            n_ok=len(oks),
            n_skipped=sum(cell.status == "skipped" for cell in cells),
            n_error=sum(cell.status == "error" for cell in cells),
            mean=mean,
            labels=dict(labels),
        )

    def summaries(self) -> list[MetricSummary]:
        return [self.summary(name) for name in self.metric_names]

    @property
    def scores(self) -> list[dict[str, Any]]:
        """One dict per row, metric name -> value, as in Ragas; None where the cell was skipped or
        failed (Ragas writes NaN there; `outcome(row, metric)` says which and why)."""
        return [
            {name: cell.value if isinstance(cell, Ok) else None for name, cell in row.items()}
            for row in self.outcomes
        ]

    def means(self) -> dict[str, float | None]:
        """Mean per metric over the cells that produced a number (see `summary` for coverage)."""
        return {item.name: item.mean for item in self.summaries()}

    def __repr__(self) -> str:
        parts = []
        for item in self.summaries():
            shown = "n/a" if item.mean is None else f"{item.mean:.4f}"
            parts.append(f"'{item.name}': {shown} ({item.coverage_text()} rows)")
        return "{" + ", ".join(parts) + "}"

    # -- export ----------------------------------------------------------------------------
    def row_records(self) -> list[dict[str, Any]]:
        """Per input row: its fields plus `metrics: {name: {value, status, reason, ...}}`."""
        return list(self.iter_row_records())

    def iter_row_records(self) -> Iterator[dict[str, Any]]:
        """`row_records()` one at a time, for writers that need not hold them all."""
        for sample, cells in zip(self.dataset, self.outcomes, strict=True):
            fields = sample.to_dict()
            # Extra input columns were kept in `metadata`; give them back their own keys.
            record = {**fields.pop("metadata", {}), **fields}
            record["metrics"] = {name: _cell_record(cell) for name, cell in cells.items()}
            yield record

    def to_jsonl(self, path: str | Path) -> None:
        """Write `row_records()`, one JSON object per line. The file is written to a temporary file
        beside `path` and renamed into place, so it appears complete or not at all; text UTF-8 cannot
        encode (lone surrogates) is written as JSON escapes, which read back identically."""
        with atomic_open(path) as handle:
            for record in self.iter_row_records():
                handle.write(json_line(record))

    def to_pandas(self) -> Any:
        """The dataset's columns, then per metric `<name>` (value), `<name>_status`, `<name>_reason`."""
        pd = require("pandas", extra="pandas", feature="EvaluationResult.to_pandas")
        frame = self.dataset.to_pandas()
        for name in self.metric_names:
            cells = [row[name] for row in self.outcomes]
            frame[name] = pd.Series(
                [cell.value if isinstance(cell, Ok) else None for cell in cells], dtype="object"
            )
            if all(isinstance(cell, Ok) and _numeric(cell.value) is not None for cell in cells):
                frame[name] = frame[name].astype("float64")
            frame[f"{name}_status"] = [cell.status for cell in cells]
            frame[f"{name}_reason"] = [_reason(cell) for cell in cells]
        return frame

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": RESULT_FORMAT_VERSION,
            "metrics": self.metric_specs,
            "summary": [
                {
                    "name": item.name,
                    "mean": item.mean,
                    "n_rows": item.n_rows,
                    "n_ok": item.n_ok,
                    "n_skipped": item.n_skipped,
                    "n_error": item.n_error,
                    "labels": item.labels,
                }
                for item in self.summaries()
            ],
            "usage": self.usage().model_dump(),
            "seconds": self.seconds,
        }


def _check_prices(
    per_model_costs: Mapping[str, tuple[float, float]] | None,
) -> dict[str, tuple[float, float]]:
    if per_model_costs is None:
        return {}
    if not isinstance(per_model_costs, Mapping):
        raise UsageError(
            "per_model_costs must map a model name to (input, output) USD per token, "
            f"got {type(per_model_costs).__name__}"
        )
    prices = {}
    for model, pair in per_model_costs.items():
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or any(
                isinstance(p, bool) or not isinstance(p, (int, float)) or not p >= 0 for p in pair
            )
        ):
            raise UsageError(
                f"per_model_costs[{model!r}] must be (input, output) USD per token, "
                f"two numbers of 0 or more; got {pair!r}"
            )
        prices[str(model)] = (float(pair[0]), float(pair[1]))
    return prices


def _model_names(identity: Any) -> tuple[str, ...]:
    """The names a judge model answers to in per_model_costs: "model" and "provider/model"."""
    if not isinstance(identity, Mapping) or "model" not in identity:
        return ()
    model = str(identity["model"])
    provider = identity.get("provider")
    return (model, f"{provider}/{model}") if provider else (model,)


def _reason(cell: Outcome) -> str | None:
    if isinstance(cell, Error):
        return f"{cell.error_type}: {cell.message}"
    return cell.reason


def _cell_record(cell: Outcome) -> dict[str, Any]:
    record: dict[str, Any] = {
        "value": cell.value if isinstance(cell, Ok) else None,
        "status": cell.status,
        "reason": _reason(cell),
    }
    if isinstance(cell, Ok) and cell.details:
        record["details"] = cell.details
    if isinstance(cell, Error):
        record["attempts"] = cell.attempts
        if cell.raw is not None:
            record["raw"] = cell.raw
    return record


__all__ = ["RESULT_FORMAT_VERSION", "EvaluationResult", "MetricSummary"]
