"""A RAGEvaluator-style entry point: a dict of columns in, a dict of score lists out.

    from assay.evaluator import evaluate
    scores = evaluate(["faithfulness", "answer_similarity"],
                      {"user_input": [...], "response": [...], "retrieved_contexts": [[...]], "reference": [...]},
                      language="chinese", prompts_path="prompts/")
    # {"faithfulness": [0.8, ...], "semantic_similarity": [0.93, ...]}   or None

Contract (spec 003):
- Every limit is checked before any model is built or called. A violation makes the call return
  None and logs one line per problem naming the argument, the index and the limit.
- Any failure afterwards (a model error, an unreadable prompt file, a cell without a score) also
  returns None, with the reason logged. The return type is `Dict[str, List[float]]`, and a list of
  floats cannot hold a missing score: so if any (sample, metric) cell is skipped (e.g. a response
  with no factual claims, an empty context list) or fails, the whole call returns None and the log
  names each such cell. NaN is never used. For per-cell outcomes (`Ok | Skipped | Error`) and
  partial results use `assay.evaluate`, which this wraps.
- Logging is off by default. Set the environment variable `ASSAY_DISABLE_LOGGING=0` to see it on
  stderr (like the spec's `DISABLE_RAGAS_LOGGING=0`); the logger is `assay.evaluator`.
- `answer_similarity` is scored by `semantic_similarity` and reported under that key; every other
  metric is reported under the name it was requested by.
- `language`: None uses the built-in (English) prompts; "english" or "chinese" selects that
  language. For each prompt a metric uses, in order: a file `{metric}_{prompt_id}_{language}.json`
  found under `prompts_path` (see `assay.prompts.localize`), else the built-in prompt in that
  language, else the English prompt translated by the judge (examples only) before scoring. With
  `language=None`, `prompts_path` is checked against its limits but not searched.
- `llm=` / `embeddings=` (keyword-only, beyond the spec) choose the models; without them the
  configured defaults are used (ASSAY_LLM / ASSAY_EMBEDDINGS, else the embedded offline judge and
  local embeddings, multilingual-e5 for Chinese).
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from assay._util.sync import run_sync
from assay.metrics.base import Metric
from assay.metrics.llm_metric import LLMMetric
from assay.prompts.localize import (
    PromptDirectory,
    PromptFileError,
    aadapt_prompt,
    metric_prompt,
    prompt_file_name,
    read_prompt_file,
    scan_prompt_directory,
)
from assay.prompts.prompt import Prompt

LOGGING_ENV = "ASSAY_DISABLE_LOGGING"

MAX_METRICS = 14
MAX_NAME_CHARS = 50
MAX_ITEMS = 128
MAX_CHARS = 1_000_000
MAX_PATH_CHARS = 255
STRING_KEYS = ("user_input", "response", "reference")
DATASET_KEYS = ("user_input", "response", "retrieved_contexts", "reference")
LANGUAGES = ("english", "chinese")
# Names the spec (and Ragas) use for metrics assay knows under another id: name -> (id, result key).
ALIASES: dict[str, tuple[str, str]] = {
    "answer_similarity": ("semantic_similarity", "semantic_similarity"),
    "llm_context_precision_with_reference": (
        "context_precision",
        "llm_context_precision_with_reference",
    ),
    "llm_context_precision_without_reference": (
        "context_utilization",
        "llm_context_precision_without_reference",
    ),
}
_MAX_LOGGED_PROBLEMS = 20

logger = logging.getLogger("assay.evaluator")


def logging_enabled() -> bool:
    """True when `ASSAY_DISABLE_LOGGING` is set to 0 (read at every log call)."""
    return os.environ.get(LOGGING_ENV, "").strip() == "0"


class _EnvironmentGate(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return logging_enabled()


class _StderrHandler(logging.Handler):
    """Writes to whatever sys.stderr is at the time (so redirection and capture work)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


if not any(isinstance(f, _EnvironmentGate) for f in logger.filters):
    logger.addFilter(_EnvironmentGate())
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("assay.evaluator %(levelname)s: %(message)s"))
    logger.addHandler(_handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # silent unless switched on, whatever the application's logging setup


class _Invalid(Exception):
    """Raised inside the checks with the list of problems found."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclasses.dataclass
class _Request:
    requested: str  # the name as given
    metric_id: str  # assay's id
    key: str  # the result key


# -- the checks ----------------------------------------------------------------------------------
def _catalogue() -> dict[str, type[Metric]]:
    """Metrics this entry point can run: single-turn, fed by the four dataset columns."""
    from assay.metrics.registry import metric_classes

    return {name: cls for name, cls in metric_classes().items() if cls.sample_kind == "single_turn"}


def _check_metrics(metrics: Any, problems: list[str]) -> list[_Request]:
    if isinstance(metrics, (str, bytes)) or not isinstance(metrics, Sequence):
        problems.append(f"metrics: expected a list of metric names, got {type(metrics).__name__}")
        return []
    count = len(metrics)
    if not 1 <= count <= MAX_METRICS:
        problems.append(f"metrics: {count} names given; the limit is 1 to {MAX_METRICS}")
        if count > MAX_METRICS:
            return []
    catalogue = _catalogue()
    requests: list[_Request] = []
    seen: dict[str, int] = {}
    for index, name in enumerate(metrics):
        where = f"metrics[{index}]"
        if not isinstance(name, str):
            problems.append(f"{where}: expected a metric name (str), got {type(name).__name__}")
            continue
        if not 1 <= len(name) <= MAX_NAME_CHARS:
            problems.append(
                f"{where}: a name of {len(name)} characters; the limit is 1 to {MAX_NAME_CHARS}"
            )
            continue
        metric_id, key = ALIASES.get(name, (name, name))
        if metric_id not in catalogue:
            close = difflib.get_close_matches(name, [*catalogue, *ALIASES], n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            problems.append(
                f"{where}: unknown metric {name!r}{hint} (known: {', '.join([*catalogue, *ALIASES])})"
            )
            continue
        unusable = [f for f in catalogue[metric_id].required_fields if f not in DATASET_KEYS]
        if unusable:
            problems.append(
                f"{where}: {name!r} needs {', '.join(unusable)}, which this entry point's dataset "
                f"cannot hold (its keys are {', '.join(DATASET_KEYS)})"
            )
            continue
        if key in seen:
            problems.append(
                f"{where}: {name!r} repeats metrics[{seen[key]}] (both report {key!r}); "
                "names must be unique"
            )
            continue
        seen[key] = index
        requests.append(_Request(name, metric_id, key))
    return requests


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def _check_strings(values: Any, where: str, problems: list[str], *, minimum: int = 0) -> int | None:
    """A list of 0/1..128 strings of 1..1,000,000 characters; returns its length if it is a list."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        problems.append(f"{where}: expected a list of strings, got {type(values).__name__}")
        return None
    if not minimum <= len(values) <= MAX_ITEMS:
        problems.append(f"{where}: {_items(len(values))}; the limit is {minimum} to {MAX_ITEMS}")
        return len(values)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            problems.append(f"{where}[{index}]: expected a string, got {type(value).__name__}")
        elif not 1 <= len(value) <= MAX_CHARS:
            problems.append(
                f"{where}[{index}]: a string of {len(value):,} characters; "
                f"the limit is 1 to {MAX_CHARS:,}"
            )
    return len(values)


def _check_dataset(dataset: Any, problems: list[str]) -> tuple[dict[str, list[Any]], int]:
    if not isinstance(dataset, Mapping):
        problems.append(f"dataset: expected a dict of columns, got {type(dataset).__name__}")
        return {}, 0
    if not 1 <= len(dataset) <= len(DATASET_KEYS):
        problems.append(
            f"dataset: {len(dataset)} keys; the limit is 1 to {len(DATASET_KEYS)} "
            f"({', '.join(DATASET_KEYS)})"
        )
    lengths: dict[str, int] = {}
    columns: dict[str, list[Any]] = {}
    for key, values in dataset.items():
        where = f"dataset[{key!r}]"
        if key not in DATASET_KEYS:
            problems.append(f"{where}: unknown key; the allowed keys are {', '.join(DATASET_KEYS)}")
            continue
        if key == "retrieved_contexts":
            if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
                problems.append(
                    f"{where}: expected a list of lists of strings, got {type(values).__name__}"
                )
                continue
            lengths[key] = len(values)
            if not 1 <= len(values) <= MAX_ITEMS:
                problems.append(f"{where}: {_items(len(values))}; the limit is 1 to {MAX_ITEMS}")
                continue
            for index, inner in enumerate(values):
                _check_strings(inner, f"{where}[{index}]", problems)
        else:
            length = _check_strings(values, where, problems)
            if length is None:
                continue
            lengths[key] = length
        columns[key] = [list(v) if isinstance(v, (list, tuple)) else v for v in values]
    if len(set(lengths.values())) > 1:
        anchor = "retrieved_contexts" if "retrieved_contexts" in lengths else next(iter(lengths))
        for key, length in lengths.items():
            if length != lengths[anchor]:
                problems.append(
                    f"dataset[{key!r}]: {_items(length)}, but dataset[{anchor!r}] has "
                    f"{_items(lengths[anchor])}; all lists must have the same length"
                )
    rows = next(iter(lengths.values()), 0)
    return columns, rows


def _check_language(language: Any, problems: list[str]) -> None:
    if language is not None and (not isinstance(language, str) or language not in LANGUAGES):
        problems.append(
            f"language: {language!r} is not supported; use None, 'english' or 'chinese'"
        )


def _check_prompts_path(prompts_path: Any, problems: list[str]) -> PromptDirectory | None:
    if prompts_path is None:
        return None
    if not isinstance(prompts_path, (str, os.PathLike)):
        problems.append(f"prompts_path: expected a string, got {type(prompts_path).__name__}")
        return None
    text = os.fspath(prompts_path)
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_PATH_CHARS:
        problems.append(
            f"prompts_path: a path of {len(text)} characters; the limit is 1 to {MAX_PATH_CHARS}"
        )
        return None
    try:
        return scan_prompt_directory(text, label="prompts_path")
    except PromptFileError as exc:
        problems.append(str(exc))
        return None


def _check_fit(requests: list[_Request], columns: Mapping[str, Any], problems: list[str]) -> None:
    catalogue = _catalogue()
    for index, request in enumerate(requests):
        absent = [f for f in catalogue[request.metric_id].required_fields if f not in columns]
        if absent:
            problems.append(
                f"metrics[{index}]: {request.requested!r} needs the dataset key(s) "
                f"{', '.join(absent)}, which dataset does not have"
            )


# -- building the run ------------------------------------------------------------------------------
def _build(requests: list[_Request], language: str | None) -> list[Metric]:
    from assay.metrics.registry import create_metric

    catalogue = _catalogue()
    built = []
    for request in requests:
        params: dict[str, Any] = {}
        if request.key != request.metric_id:
            params["name"] = request.key
        if language is not None and issubclass(catalogue[request.metric_id], LLMMetric):
            params["language"] = language
        built.append(create_metric(request.metric_id, **params))
    return built


def _use_prompt_files(
    metrics: list[Metric], language: str | None, directory: PromptDirectory | None
) -> list[tuple[LLMMetric, str]]:
    """Apply prompt files found under prompts_path; return the prompts still to translate."""
    untranslated: list[tuple[LLMMetric, str]] = []
    if language is None:
        if directory is not None:
            logger.info(
                "language is None: the built-in prompts are used and prompts_path is not searched"
            )
        return untranslated
    for metric in metrics:
        if not isinstance(metric, LLMMetric):
            continue
        for prompt_id in metric.prompt_ids:
            path = (
                directory.find(prompt_file_name(metric.name, prompt_id, language))
                if directory
                else None
            )
            if path is not None:
                try:
                    metric.set_prompt(read_prompt_file(path, metric, prompt_id, language))
                except PromptFileError as exc:
                    raise _Invalid([f"prompts_path: {exc}"]) from None
                logger.info("%s: prompt %r read from %s", metric.name, prompt_id, path)
            elif metric_prompt(metric, prompt_id).language != language:
                untranslated.append((metric, prompt_id))
    return untranslated


async def _translate(untranslated: list[tuple[LLMMetric, str]], language: str, llm: Any) -> None:
    done: dict[str, Prompt] = {}
    for metric, prompt_id in untranslated:
        original = metric_prompt(metric, prompt_id)
        if original.hash not in done:
            logger.info("translating prompt %r into %s (no prompt file found)", prompt_id, language)
            done[original.hash] = await aadapt_prompt(original, language, llm)
        metric.set_prompt(done[original.hash])


async def _run(
    metrics: list[Metric],
    rows: list[dict[str, Any]],
    language: str | None,
    untranslated: list[tuple[LLMMetric, str]],
    llm: Any,
    embeddings: Any,
    show_progress: bool,
) -> dict[str, list[float]] | None:
    from assay.engine.run import aevaluate
    from assay.models.defaults import default_embeddings, default_llm
    from assay.schema.outcome import Ok, Skipped
    from assay.schema.result import EvaluationResult

    wants_llm = bool(untranslated) or any(
        m.needs_llm and getattr(m, "llm", None) is None for m in metrics
    )
    if llm is None and wants_llm:
        llm = default_llm()
    if embeddings is None and any(m.needs_embeddings for m in metrics):
        embeddings = default_embeddings(language)
    if untranslated:
        await _translate(untranslated, language or "english", llm)
    result = await aevaluate(
        rows, metrics, llm=llm, embeddings=embeddings, show_progress=show_progress
    )
    assert isinstance(result, EvaluationResult)  # not asked for an Executor
    scores: dict[str, list[float]] = {}
    missing: list[str] = []
    for metric in metrics:
        values: list[float] = []
        for row in range(len(rows)):
            outcome = result.outcome(row, metric.name)
            if isinstance(outcome, Ok) and isinstance(outcome.value, (int, float)):
                values.append(float(outcome.value))
            elif isinstance(outcome, Ok):
                missing.append(
                    f"dataset row {row}, metric {metric.name}: a {type(outcome.value).__name__} "
                    "value, not a number"
                )
            elif isinstance(outcome, Skipped):
                missing.append(
                    f"dataset row {row}, metric {metric.name}: skipped: {outcome.reason}"
                )
            else:
                missing.append(
                    f"dataset row {row}, metric {metric.name}: {outcome.error_type}: {outcome.message}"
                )
        scores[metric.name] = values
    if missing:
        _log_problems(missing)
        logger.error(
            "returning None: %d of %d cells have no score, and a list of floats cannot hold a "
            "missing one (assay.evaluate gives per-cell outcomes)",
            len(missing),
            len(rows) * len(metrics),
        )
        return None
    logger.info(
        "scored %d samples with %d metrics in %.1f s", len(rows), len(metrics), result.seconds
    )
    return scores


def _log_problems(problems: list[str]) -> None:
    for problem in problems[:_MAX_LOGGED_PROBLEMS]:
        logger.error("%s", problem)
    if len(problems) > _MAX_LOGGED_PROBLEMS:
        logger.error("... and %d more problems", len(problems) - _MAX_LOGGED_PROBLEMS)


# -- the entry point -------------------------------------------------------------------------------
def evaluate(
    metrics: list[str],
    dataset: dict[str, Any],
    language: str | None = None,
    prompts_path: str | None = None,
    show_progress: bool = False,
    *,
    llm: Any = None,
    embeddings: Any = None,
) -> dict[str, list[float]] | None:
    """Score every sample of `dataset` with every metric named in `metrics`.

    Returns {metric: [one score per sample]}, or None if any limit is violated or anything fails;
    the reason is logged (shown with ASSAY_DISABLE_LOGGING=0). See the module docstring.
    """
    try:
        problems: list[str] = []
        requests = _check_metrics(metrics, problems)
        columns, n_rows = _check_dataset(dataset, problems)
        _check_language(language, problems)
        if not isinstance(show_progress, bool):
            problems.append(f"show_progress: expected True or False, got {show_progress!r}")
        directory = _check_prompts_path(prompts_path, problems)
        if not problems:
            _check_fit(requests, columns, problems)
        if problems:
            raise _Invalid(problems)
        built = _build(requests, language)
        untranslated = _use_prompt_files(built, language, directory)
        # Every check has passed; from here on models may be built and called.
        if n_rows == 0:
            return {metric.name: [] for metric in built}
        rows = [{key: column[row] for key, column in columns.items()} for row in range(n_rows)]
        return run_sync(_run(built, rows, language, untranslated, llm, embeddings, show_progress))
    except _Invalid as invalid:
        _log_problems(invalid.problems)
        logger.error(
            "returning None: the arguments are outside the limits above; no model was called"
        )
        return None
    except Exception as exc:
        logger.error("returning None: %s: %s", type(exc).__name__, exc, exc_info=logging_enabled())
        return None


class RAGEvaluator:
    """Spec 003's parent topic: the entry point as an object holding the models.

    RAGEvaluator(llm=judge).evaluate(["faithfulness"], {"user_input": [...], ...}, language="chinese")
    """

    def __init__(self, llm: Any = None, embeddings: Any = None) -> None:
        self.llm, self.embeddings = llm, embeddings

    def evaluate(
        self,
        metrics: list[str],
        dataset: dict[str, Any],
        language: str | None = None,
        prompts_path: str | None = None,
        show_progress: bool = False,
    ) -> dict[str, list[float]] | None:
        """`assay.evaluator.evaluate` with this evaluator's models; the same limits and return value."""
        return evaluate(
            metrics,
            dataset,
            language,
            prompts_path,
            show_progress,
            llm=self.llm,
            embeddings=self.embeddings,
        )


__all__ = ["ALIASES", "DATASET_KEYS", "LOGGING_ENV", "RAGEvaluator", "evaluate", "logging_enabled"]
