"""`evaluate` / `aevaluate`: one job per (row, metric), every cell ending in a typed outcome.

The run is planned up front (which cells apply, which are already in the checkpoint), then
the remaining cells run concurrently under a limit. Each finished cell is appended to the run
directory (when one is given) before the progress bar moves, so a crash or kill -9 loses at
most the cells in flight.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from assay._util.sync import run_sync
from assay.engine.checkpoint import RunDirectory, fingerprint
from assay.engine.progress import CellProgress
from assay.errors import NotApplicable, RunFailed, UsageError
from assay.metrics.base import Metric, first_leaf
from assay.metrics.registry import create_metric
from assay.models.defaults import default_embeddings, default_llm
from assay.models.embeddings import Embeddings
from assay.models.endpoint import sharing_answers
from assay.models.factory import embedding_factory, llm_factory
from assay.models.llm import LLM
from assay.models.usage import Budget, UsageMeter, budgeting, metering
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell, Error, Ok, Outcome, Skipped
from assay.schema.result import EvaluationResult
from assay.schema.samples import Sample
from assay.schema.usage import Usage


def coerce_dataset(dataset: Any, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
    """Accept an EvaluationDataset, a list of dicts/samples, a pandas frame, an HF dataset or a path."""
    if dataset is None:
        raise UsageError("evaluate() needs a dataset")
    if isinstance(dataset, EvaluationDataset):
        if column_map:
            return EvaluationDataset.from_list(dataset.to_list(), column_map=column_map)
        return dataset
    if isinstance(dataset, (str, Path)):
        return EvaluationDataset.load(dataset, column_map=column_map)
    if hasattr(dataset, "to_dict") and hasattr(dataset, "columns"):  # pandas DataFrame
        return EvaluationDataset.from_pandas(dataset, column_map=column_map)
    if hasattr(dataset, "to_list") and hasattr(dataset, "features"):  # Hugging Face datasets.Dataset
        return EvaluationDataset.from_hf_dataset(dataset, column_map=column_map)
    if isinstance(dataset, Sequence):
        items = list(dataset)
        if items and all(not isinstance(item, Mapping) for item in items):
            return EvaluationDataset(items)
        return EvaluationDataset.from_list(items, column_map=column_map)
    raise UsageError(f"evaluate() cannot use a dataset of type {type(dataset).__name__}")


def coerce_metrics(metrics: Any) -> list[Metric]:
    if metrics is None or (isinstance(metrics, Sequence) and not metrics):
        raise UsageError("evaluate() needs at least one metric, e.g. metrics=[BleuScore()]")
    if isinstance(metrics, (str, Metric)) or not isinstance(metrics, Sequence):
        raise UsageError("metrics must be a list, e.g. metrics=[BleuScore()] or metrics=['bleu_score']")
    resolved = [create_metric(item) if isinstance(item, str) else item for item in metrics]
    for position, metric in enumerate(resolved):
        if not isinstance(metric, Metric):
            raise UsageError(
                f"metrics[{position}] is a {type(metric).__name__}, not a metric object or metric name"
            )
    names = [metric.name for metric in resolved]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsageError(
            f"two metrics are named {', '.join(duplicates)}; give one a different name=... so results "
            "can be told apart"
        )
    return resolved


def _check_metric_fits(metric: Metric, dataset: EvaluationDataset) -> None:
    """Mistakes that would skip every row are reported before any work starts."""
    if not len(dataset):
        return
    if dataset.kind not in metric.sample_kinds:
        wanted = "multi-turn (conversation)" if metric.sample_kind == "multi_turn" else "single-turn"
        raise UsageError(f"metric {metric.name} scores {wanted} samples, but the dataset is {dataset.kind.replace('_', '-')}")
    present = set(dataset.features()) | set(dataset.extra_columns())
    absent = [field for field in metric.fields_for(dataset.kind)[0] if field not in present]
    if absent:
        raise UsageError(
            f"metric {metric.name} needs {', '.join(absent)}, which no row of the dataset has "
            f"(it has {', '.join(sorted(present)) or 'no fields'})"
        )


def _prepare_metrics(metrics: list[Metric], llm: Any, embeddings: Any) -> list[Metric]:
    """Give metrics lacking a model the run's one; with none given, the configured default
    (ASSAY_LLM / ASSAY_EMBEDDINGS, else the embedded offline models). Built only if needed."""
    llm = coerce_llm(llm)
    embeddings = coerce_embeddings(embeddings)
    metrics = [_own_models_coerced(metric) for metric in metrics]
    if llm is None and any(m.needs_llm and getattr(m, "llm", None) is None for m in metrics):
        llm = default_llm()
    if embeddings is None and any(m.needs_embeddings and getattr(m, "embeddings", None) is None for m in metrics):
        embeddings = default_embeddings()
    return [metric.with_models(llm=llm, embeddings=embeddings) for metric in metrics]


# -- models given as something other than an assay model --------------------------------------------

_ACCEPTED_LLM = ("an LLM from llm_factory (e.g. llm_factory('openai/gpt-4o-mini')), a model string such as "
                 "'openai/gpt-4o-mini', a LangChain chat model or a LlamaIndex LLM")
_ACCEPTED_EMBEDDINGS = ("an embedding model from embedding_factory (e.g. embedding_factory("
                        "'openai/text-embedding-3-small')), a model string such as 'openai/text-embedding-3-small', "
                        "LangChain embeddings or a LlamaIndex embedding model")


def _is_a(value: Any, module: str, name: str) -> bool:
    """isinstance against an optional library's class, without importing the library."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(value, cls)


def _framework(value: Any) -> tuple[str, str] | None:
    """(library, "llm" | "embeddings") for a LangChain or LlamaIndex model object."""
    if _is_a(value, "langchain_core.language_models", "BaseLanguageModel"):
        return "langchain", "llm"
    if _is_a(value, "langchain_core.embeddings", "Embeddings"):
        return "langchain", "embeddings"
    if _is_a(value, "llama_index.core.llms", "LLM"):
        return "llamaindex", "llm"
    if _is_a(value, "llama_index.core.embeddings", "BaseEmbedding"):
        return "llamaindex", "embeddings"
    return None


def _type_name(value: Any) -> str:
    module = type(value).__module__.split(".")[0]
    return type(value).__name__ if module == "builtins" else f"{module}.{type(value).__name__}"


def _client_hint(value: Any, kind: str) -> str | None:
    """For a raw SDK client, the line that turns it into an assay model."""
    module = type(value).__module__.split(".")[0]
    factory, model = ("llm_factory", "gpt-4o-mini") if kind == "llm" else ("embedding_factory", "text-embedding-3-small")
    if module == "anthropic" and kind == "llm":
        model = "anthropic/claude-3-5-haiku-latest"
    elif module != "openai" and not hasattr(getattr(value, "chat", None), "completions"):
        return None
    return (f"{kind}= got a raw {_type_name(value)} client, which assay does not call directly: wrap it as "
            f"{kind}={factory}('{model}', client=client) (naming the model the client serves)")


def coerce_llm(value: Any, where: str = "llm=") -> LLM | None:
    """The judge model a caller gave, as an assay `LLM`: a model string goes through `llm_factory`, a
    LangChain chat model or LlamaIndex LLM is wrapped; anything else is a UsageError saying what to pass."""
    if value is None or isinstance(value, LLM):
        return value
    if isinstance(value, str):
        return llm_factory(value)
    framework = _framework(value)
    if framework == ("langchain", "llm"):
        from assay.models.providers.langchain import LangchainLLMWrapper

        return LangchainLLMWrapper(value)
    if framework == ("llamaindex", "llm"):
        from assay.models.providers.llamaindex import LlamaIndexLLMWrapper

        return LlamaIndexLLMWrapper(value)
    if isinstance(value, Embeddings) or framework is not None:
        raise UsageError(f"{where} got an embedding model ({_type_name(value)}); pass it as embeddings=, not llm=")
    hint = _client_hint(value, "llm")
    if hint is not None:
        raise UsageError(hint if where == "llm=" else f"{where.removesuffix('llm=')}{hint}")
    raise UsageError(f"{where} got a {_type_name(value)}; it accepts {_ACCEPTED_LLM}")


def coerce_embeddings(value: Any, where: str = "embeddings=") -> Embeddings | None:
    """Like `coerce_llm`, for embedding models (`embedding_factory`, LangChain, LlamaIndex)."""
    if value is None or isinstance(value, Embeddings):
        return value
    if isinstance(value, str):
        return embedding_factory(value)
    framework = _framework(value)
    if framework == ("langchain", "embeddings"):
        from assay.models.providers.langchain import LangchainEmbeddingsWrapper

        return LangchainEmbeddingsWrapper(value)
    if framework == ("llamaindex", "embeddings"):
        from assay.models.providers.llamaindex import LlamaIndexEmbeddingsWrapper

        return LlamaIndexEmbeddingsWrapper(value)
    if isinstance(value, LLM) or framework is not None:
        raise UsageError(f"{where} got a judge model ({_type_name(value)}), not an embedding model; pass it as "
                         "llm=, and an embedding model (embedding_factory(...)) as embeddings=")
    hint = _client_hint(value, "embeddings")
    if hint is not None:
        raise UsageError(hint if where == "embeddings=" else f"{where.removesuffix('embeddings=')}{hint}")
    raise UsageError(f"{where} got a {_type_name(value)}; it accepts {_ACCEPTED_EMBEDDINGS}")


def _own_models_coerced(metric: Metric) -> Metric:
    """A metric built with a model string (or a LangChain model...) of its own gets it resolved."""
    fields = {f.name for f in dataclasses.fields(metric)} if dataclasses.is_dataclass(metric) else set()
    changes: dict[str, Any] = {}
    own_llm, own_embeddings = getattr(metric, "llm", None), getattr(metric, "embeddings", None)
    if "llm" in fields and own_llm is not None and not isinstance(own_llm, LLM):
        changes["llm"] = coerce_llm(own_llm, f"metric {metric.name}: llm=")
    if "embeddings" in fields and own_embeddings is not None and not isinstance(own_embeddings, Embeddings):
        changes["embeddings"] = coerce_embeddings(own_embeddings, f"metric {metric.name}: embeddings=")
    if not changes:
        return metric
    copy = dataclasses.replace(metric, **changes)
    copy.__dict__.update({k: v for k, v in metric.__dict__.items() if k.startswith("_")})
    return copy


def _check_settings(timeout: Any, budget: Any) -> None:
    """Numbers that would fail only after the work began are refused before it."""
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise UsageError(f"timeout must be a number of seconds or None (no limit), got {_type_name(timeout)}")
        if not timeout > 0:  # also NaN
            raise UsageError(f"timeout must be more than 0 seconds (or None for no limit), got {timeout!r}")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            raise UsageError(f"budget must be a number of USD or None (no cap), got {_type_name(budget)}")
        if not budget >= 0:  # also NaN
            raise UsageError(f"budget must be 0 USD or more (or None for no cap), got {budget!r}")


def _concurrency(requested: int | None, metrics: list[Metric]) -> int:
    """Cells in flight. By default twice each judge's concurrency ceiling (a cell alternates
    between model calls and its own work), at most 256: the judge's adaptive limiter, not this
    pool, decides how many calls run at once. With an RPM limit, at most rpm / 4 cells, so that a
    cell does not spend its timeout queued for a request slot."""
    if requested is not None:
        if requested < 1:
            raise UsageError(f"max_concurrency must be at least 1, got {requested}")
        return requested
    bounds = [256]
    for metric in metrics:
        for model in (getattr(metric, "llm", None), getattr(metric, "embeddings", None)):
            limiter = getattr(model, "limiter", None)
            if limiter is None:
                continue
            bounds.append(2 * limiter.concurrency.ceiling)
            if limiter.limits.rpm:
                bounds.append(max(4, int(limiter.limits.rpm // 4)))
    return min(bounds)


async def score_cell(metric: Metric, sample: Sample, *, timeout: float | None) -> tuple[Outcome, Usage]:
    """Run one metric on one sample; classify what happened and meter the model calls it made."""
    meter = UsageMeter()
    with metering(meter):
        outcome = await _classify(metric, sample, timeout=timeout)
    return outcome, meter.usage


async def _classify(metric: Metric, sample: Sample, *, timeout: float | None) -> Outcome:
    missing = metric.missing_fields(sample)
    if missing:
        return Skipped(reason=f"row has no {', '.join(missing)}")
    scope: anyio.CancelScope | None = None
    try:
        with anyio.fail_after(timeout) as scope:
            result = await metric.ascore_sample(sample)
    except NotApplicable as exc:
        return Skipped(reason=str(exc) or "not applicable")
    except TimeoutError as exc:
        if scope is not None and scope.cancel_called:
            return Error(error_type="Timeout", message=f"no result within {timeout:g} s for this cell "
                         "(a slow judge: raise timeout= / --timeout, or lower max_concurrency)")
        return Error(error_type=type(exc).__name__, message=str(exc) or "timed out")
    except Exception as group:
        exc = first_leaf(group)  # concurrent judge calls fail as exception groups
        if isinstance(exc, NotApplicable):
            return Skipped(reason=str(exc) or "not applicable")
        return Error(
            error_type=type(exc).__name__,
            message=str(exc) or repr(exc),
            attempts=getattr(exc, "attempts", 1),
            raw=getattr(exc, "raw", None),
        )
    try:
        return Ok(value=result.value, reason=result.reason, details=result.details)
    except ValueError as exc:  # e.g. a non-finite float from a metric: refuse to store NaN
        return Error(error_type="InvalidValue", message=f"metric returned {result.value!r}: {exc}")


async def aevaluate(
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    *,
    llm: Any = None,
    embeddings: Any = None,
    column_map: Mapping[str, str] | None = None,
    run_dir: str | Path | None = None,
    max_concurrency: int | None = None,
    timeout: float | None = 600.0,
    strict: bool = False,
    show_progress: bool = True,
    budget: float | None = None,
) -> EvaluationResult:
    """Score every row of `dataset` with every metric.

    dataset: an EvaluationDataset, a list of dicts or samples, a pandas DataFrame, a Hugging
        Face dataset, or a path to .jsonl/.json/.csv. Legacy column names are mapped.
    metrics: metric objects (`BleuScore()`) or ids (`"bleu_score"`).
    llm / embeddings: given to metrics that need them and have none of their own. When not
        given: ASSAY_LLM / ASSAY_EMBEDDINGS, else the embedded offline judge and embeddings.
        A model string ("openai/gpt-4o-mini") is built with llm_factory / embedding_factory; a
        LangChain or LlamaIndex model is wrapped; a raw SDK client or anything else is a UsageError.
    run_dir: a directory where finished cells are saved as they complete; running again
        with the same directory resumes, recomputing only what is missing or failed.
    max_concurrency: cells scored at once (default: twice the judge's concurrency ceiling, at most 256;
        the judge's adaptive limiter decides how many model calls run at once).
    timeout: seconds allowed per cell before it becomes an `error` outcome (more than 0; None: no limit).
    strict: raise `RunFailed` at the first error outcome instead of recording it.
    budget: a spending cap in USD; once reached no new model call is made and the cells
        left are `error` outcomes of type BudgetExhausted (a resumed run picks them up).
    """
    _check_settings(timeout, budget)
    data = coerce_dataset(dataset, column_map)
    if not len(data):
        raise UsageError("the dataset has no rows")
    chosen = _prepare_metrics(coerce_metrics(metrics), llm, embeddings)
    for metric in chosen:
        _check_metric_fits(metric, data)
    max_concurrency = _concurrency(max_concurrency, chosen)

    specs = [metric.spec() for metric in chosen]
    outcomes: list[dict[str, Outcome]] = [{} for _ in range(len(data))]
    usages: list[dict[str, Usage]] = [{} for _ in range(len(data))]
    checkpoint = RunDirectory(run_dir) if run_dir is not None else None
    if checkpoint is not None:
        rows = data.to_list()
        kept = checkpoint.open(
            run_fingerprint=fingerprint(rows, specs, {}),
            description={"n_rows": len(rows), "metrics": specs},
            n_rows=len(rows),
            metric_names=[metric.name for metric in chosen],
        )
        for (row, name), cell in kept.items():
            if row < len(outcomes):
                outcomes[row][name] = cell.outcome
                if cell.usage is not None:
                    usages[row][name] = cell.usage

    pending = [
        (row, metric) for row in range(len(data)) for metric in chosen if metric.name not in outcomes[row]
    ]
    total = len(data) * len(chosen)
    started = time.perf_counter()
    failure: list[RunFailed] = []
    queue = iter(pending)
    spending = Budget(budget) if budget is not None else None

    try:
        with CellProgress(total, done=total - len(pending), enabled=show_progress) as progress:

            async def worker(cancel: anyio.CancelScope) -> None:
                # A fixed pool of workers pulls cells from one queue: memory stays flat
                # however many cells there are, and at most `max_concurrency` run at once.
                for row, metric in queue:
                    began = time.perf_counter()
                    if spending is not None and spending.exhausted:
                        outcome, usage = Error(
                            error_type="BudgetExhausted",
                            message=f"not started: the budget of ${spending.limit:g} was reached",
                            attempts=0,
                        ), Usage()
                    else:
                        outcome, usage = await score_cell(metric, data[row], timeout=timeout)
                    outcomes[row][metric.name] = outcome
                    usages[row][metric.name] = usage
                    if checkpoint is not None:
                        checkpoint.append(
                            Cell(row=row, metric=metric.name, outcome=outcome,
                                 seconds=time.perf_counter() - began, usage=usage)
                        )
                    progress.advance(failed=isinstance(outcome, Error))
                    if strict and isinstance(outcome, Error):
                        failure.append(RunFailed(row, metric.name, outcome.error_type, outcome.message))
                        cancel.cancel()
                        return

            with budgeting(spending), sharing_answers():
                async with anyio.create_task_group() as group:
                    for _ in range(min(max_concurrency, len(pending))):
                        group.start_soon(worker, group.cancel_scope)
    finally:
        if checkpoint is not None:
            checkpoint.close()
    if failure:
        raise failure[0]
    return EvaluationResult(
        data,
        specs,
        outcomes,
        usages=usages,
        seconds=time.perf_counter() - started,
        run_dir=str(run_dir) if run_dir is not None else None,
    )


@functools.wraps(aevaluate)
def evaluate(*args: Any, **kwargs: Any) -> EvaluationResult:
    """Synchronous twin of `aevaluate` (same parameters). Works in scripts, in Jupyter and inside
    a running event loop: the loop is never patched; a worker thread runs the evaluation instead."""
    return run_sync(aevaluate(*args, **kwargs))


__all__ = ["aevaluate", "coerce_dataset", "coerce_embeddings", "coerce_llm", "coerce_metrics", "evaluate", "score_cell"]
