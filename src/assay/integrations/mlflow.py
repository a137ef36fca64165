"""Log an `EvaluationResult` to MLflow: parameters, aggregate metrics with their coverage, the
per-row table, and per-row feedback on the MLflow traces the rows came from.

What one `log_result` call writes, into the active run, the run `run_id`, or a new run:

- params, per metric `<name>.class`, `.version`, `.judge` (provider/model), `.prompts` (prompt
  id@version:hash), `.params` (JSON); and `assay.run_id`, `assay.rows`, `assay.experiment`;
- metrics, per metric `<name>` (the mean over ok cells; absent when no cell has a value),
  `<name>/coverage`, `<name>/n_ok`, `<name>/n_skipped`, `<name>/n_error`, `<name>/n_rows`; and
  the run's tokens, requests, cost and seconds under `assay/...`;
- artifacts: `assay_rows.json` (an MLflow table: the dataset's columns, then per metric its value,
  status and reason, as `EvaluationResult.to_pandas`), `assay_rows.jsonl` (the lossless
  `row_records`) and `assay_result.json` (metric specs and summaries);
- feedback (`mlflow.log_feedback`) for each cell of a row whose metadata names an MLflow trace
  (`trace_id`: `tr-…`, or 32 hex digits of an OpenTelemetry trace id; `span_id` optionally): the
  value and reason of an ok cell, an `AssessmentError` with the exception type and message for a
  failed one (never a score of 0), no value and `assay.outcome = skipped` for a skipped one. The
  source is the metric's judge (`LLM_JUDGE`, `provider/model`) or `CODE` for metrics without one.

MLflow's usage telemetry is turned off (`MLFLOW_DISABLE_TELEMETRY=true`) when this module is the
first to import MLflow and the variable is not set: assay contacts no host it was not told to.

Every linked trace is looked up before anything is written, so a wrong trace id logs nothing.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._util.deps import require
from assay.errors import DataError, UsageError
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.result import EvaluationResult

FEATURE = "assay.integrations.mlflow"
TABLE_FILE = "assay_rows.json"
RECORDS_FILE = "assay_rows.jsonl"
RESULT_FILE = "assay_result.json"
PARAM_MAX = 500  # MLflow allows 6,000 characters; the full specs are in assay_result.json
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /]")
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


@dataclass(frozen=True)
class MlflowLog:
    """Where the result went: the run, and how many feedback assessments were logged."""

    run_id: str
    experiment_id: str
    feedback: int


def _mlflow() -> Any:
    if "mlflow" not in sys.modules:
        # MLflow sends usage telemetry from the moment it is imported; assay makes no calls
        # beyond loopback unless asked, so it is off unless the user set it themselves.
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    return require("mlflow", extra="mlflow", package="mlflow-skinny", feature=FEATURE)


def key_of(name: str) -> str:
    """A metric name as an MLflow key (letters, digits, `_-. /`; anything else becomes `_`)."""
    return _KEY_UNSAFE.sub("_", name) or "_"


def _short(text: str) -> str:
    return text if len(text) <= PARAM_MAX else text[: PARAM_MAX - 1] + "…"


def _judge(spec: Mapping[str, Any]) -> str | None:
    llm = spec.get("llm")
    if isinstance(llm, Mapping) and llm.get("model"):
        provider = llm.get("provider")
        return f"{provider}/{llm['model']}" if provider else str(llm["model"])
    return None


def _prompts(spec: Mapping[str, Any]) -> str:
    return ",".join(
        f"{p.get('id')}@{p.get('version')}:{p.get('hash')}"
        for p in spec.get("prompts") or []
        if isinstance(p, Mapping)
    )


def run_params(result: EvaluationResult) -> dict[str, str]:
    params = {"assay.run_id": str(result.run_id), "assay.rows": str(len(result.outcomes))}
    if result.experiment_name:
        params["assay.experiment"] = _short(result.experiment_name)
    for spec in result.metric_specs:
        key = key_of(spec["name"])
        params[f"{key}.class"] = str(spec.get("class", ""))
        params[f"{key}.version"] = str(spec.get("version", ""))
        params[f"{key}.params"] = _short(json.dumps(spec.get("params") or {}, sort_keys=True))
        judge = _judge(spec)
        if judge:
            params[f"{key}.judge"] = _short(judge)
        prompts = _prompts(spec)
        if prompts:
            params[f"{key}.prompts"] = _short(prompts)
    return params


def run_metrics(result: EvaluationResult) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for item in result.summaries():
        key = key_of(item.name)
        if item.mean is not None:
            metrics[key] = float(item.mean)
        metrics[f"{key}/coverage"] = float(item.coverage)
        metrics[f"{key}/n_ok"] = float(item.n_ok)
        metrics[f"{key}/n_skipped"] = float(item.n_skipped)
        metrics[f"{key}/n_error"] = float(item.n_error)
        metrics[f"{key}/n_rows"] = float(item.n_rows)
    usage = result.usage()
    metrics["assay/input_tokens"] = float(usage.input_tokens)
    metrics["assay/output_tokens"] = float(usage.output_tokens)
    metrics["assay/requests"] = float(usage.requests)
    metrics["assay/cost"] = float(usage.cost)
    metrics["assay/seconds"] = float(result.seconds)
    return metrics


def mlflow_trace_id(value: Any, row: int, key: str) -> str:
    """`tr-…` as it is; 32 hex digits (an OpenTelemetry trace id) as MLflow names it, `tr-<hex>`."""
    text = str(value).strip()
    if text.startswith("tr-") and len(text) > 3:
        return text
    if _HEX32.fullmatch(text):
        return f"tr-{text.lower()}"
    raise DataError(
        f"{key} must be an MLflow trace id ('tr-…') or 32 hex digits, got {value!r}",
        row=row,
        field=key,
        row_is_index=True,
    )


def _linked_rows(
    result: EvaluationResult, trace_key: str, span_key: str
) -> list[tuple[int, str, str | None]]:
    linked = []
    for index, sample in enumerate(result.dataset):
        metadata = sample.metadata or {}
        if metadata.get(trace_key) in (None, ""):
            continue
        span = metadata.get(span_key)
        linked.append(
            (
                index,
                mlflow_trace_id(metadata[trace_key], index, trace_key),
                str(span) if span not in (None, "") else None,
            )
        )
    return linked


def _feedback_args(name: str, cell: Any, spec: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    entities = require("mlflow.entities", extra="mlflow", package="mlflow-skinny", feature=FEATURE)
    judge = _judge(spec)
    source = (
        entities.AssessmentSource(source_type="LLM_JUDGE", source_id=judge)
        if judge
        else entities.AssessmentSource(source_type="CODE", source_id=f"assay:{spec.get('class')}")
    )
    metadata = {"assay.outcome": cell.status, "assay.run_id": run_id}
    prompts = _prompts(spec)
    if prompts:
        metadata["assay.prompts"] = prompts
    args: dict[str, Any] = {"name": name, "source": source, "metadata": metadata}
    if isinstance(cell, Ok):
        value = cell.value
        args["value"] = value if not isinstance(value, list) else list(value)
        if cell.reason:
            args["rationale"] = cell.reason
    elif isinstance(cell, Skipped):
        args["rationale"] = cell.reason
    elif isinstance(cell, Error):
        args["error"] = entities.AssessmentError(
            error_code=cell.error_type, error_message=cell.message
        )
        metadata["assay.attempts"] = str(cell.attempts)
    return args


def log_result(
    result: EvaluationResult,
    *,
    run_id: str | None = None,
    run_name: str | None = None,
    feedback: bool = True,
    trace_key: str = "trace_id",
    span_key: str = "span_id",
) -> MlflowLog:
    """Log `result` to MLflow (see the module). Into the active run when there is one, else into
    `run_id`, else a new run (named `run_name`, or the result's experiment name) that is ended
    afterwards. The tracking URI and experiment are MLflow's own (`mlflow.set_tracking_uri`,
    `mlflow.set_experiment`). `feedback=False` logs no assessments on traces."""
    if not isinstance(result, EvaluationResult):
        raise UsageError(f"log_result needs an EvaluationResult, got {type(result).__name__}")
    mlflow = _mlflow()
    linked = _linked_rows(result, trace_key, span_key) if feedback else []
    if linked:
        mlflow.flush_trace_async_logging()
        for index, trace_id, _span in linked:
            if mlflow.get_trace(trace_id, silent=True) is None:
                raise DataError(
                    f"{trace_key} {trace_id!r}: no such trace in the MLflow tracking store "
                    f"{mlflow.get_tracking_uri()}",
                    row=index,
                    field=trace_key,
                    row_is_index=True,
                )
    active = mlflow.active_run()
    if active is not None and run_id is not None and active.info.run_id != run_id:
        raise UsageError(f"run {active.info.run_id} is active; end it before logging to {run_id}")
    started = None
    if active is None:
        started = mlflow.start_run(run_id=run_id, run_name=run_name or result.experiment_name)
    run = mlflow.active_run()
    try:
        mlflow.log_params(run_params(result))
        mlflow.log_metrics(run_metrics(result))
        _log_artifacts(mlflow, result)
        specs = {spec["name"]: spec for spec in result.metric_specs}
        logged = 0
        for index, trace_id, span_id in linked:
            for name, cell in result.outcomes[index].items():
                args = _feedback_args(name, cell, specs.get(name, {}), str(result.run_id))
                mlflow.log_feedback(trace_id=trace_id, span_id=span_id, **args)
                logged += 1
    except BaseException:
        if started is not None:
            mlflow.end_run(status="FAILED")
        raise
    if started is not None:
        mlflow.end_run()
    return MlflowLog(run.info.run_id, run.info.experiment_id, logged)


def _log_artifacts(mlflow: Any, result: EvaluationResult) -> None:
    require("pandas", extra="mlflow", feature=f"{FEATURE} (the per-row table)")
    frame = result.to_pandas()
    # MLflow's table format holds JSON values; lists of contexts and dict details stay as they are.
    mlflow.log_table(frame, artifact_file=TABLE_FILE)
    mlflow.log_dict(result.to_dict(), RESULT_FILE)
    with tempfile.TemporaryDirectory(prefix="assay-mlflow-") as folder:
        path = Path(folder) / RECORDS_FILE
        result.to_jsonl(path)
        mlflow.log_artifact(str(path))


__all__ = ["MlflowLog", "key_of", "log_result", "mlflow_trace_id", "run_metrics", "run_params"]
