"""Evaluate an application directly: ask it every row's question, then score what it said.

One path for every framework (LangChain, LlamaIndex, Haystack, a plain function): each adapter
only says how to ask its application one question (`Ask`: a sample in, an `AppAnswer` out).
This module asks all rows concurrently, at most `app_concurrency` at once and each within
`app_timeout`, with a progress bar; a row whose call failed keeps its place and ends as an
`Error` outcome of type `ApplicationError` (or `ApplicationTimeout`) naming the cause in every
metric's cell, while the other rows are scored by the engine as usual (its concurrency, limits,
budget, checkpoint and typed outcomes). The result lists the rows in dataset order, with the
answers the application gave in `result.dataset`.

Everything that can be checked before the application is asked is: the dataset, the metrics, the
judge models, and that every metric finds its fields once `response` and `retrieved_contexts` are
filled in. No application call is spent on a run that could not be scored.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from assay._util.sync import run_sync
from assay.engine.executor import ExceptionInRunner
from assay.engine.models import coerce_embeddings, coerce_llm
from assay.engine.plan import check_metric_fits, coerce_dataset, coerce_metrics
from assay.engine.progress import CellProgress
from assay.engine.run import aevaluate
from assay.errors import AssayError, UsageError, first_leaf
from assay.metrics.base import Metric
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Error, Outcome
from assay.schema.result import EvaluationResult
from assay.schema.samples import SingleTurnSample
from assay.schema.usage import Usage

T = TypeVar("T")

# The fields an application run fills in; on a failed row they are cleared, so an answer left in
# the dataset from another run is never scored as this application's.
APP_FIELDS = ("response", "retrieved_contexts")


class UnreadableAppOutput(AssayError, ValueError):
    """The application answered, but its output holds no answer (or contexts) assay can read."""


@dataclass(frozen=True)
class AppAnswer:
    """What the application said for one row: its answer and the texts it retrieved (None when
    it reported none)."""

    response: str
    retrieved_contexts: list[str] | None = None


Ask = Callable[[SingleTurnSample], Awaitable[AppAnswer]]


async def in_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call a blocking application function in a worker thread. On timeout the thread is
    abandoned (Python cannot stop it), so the row still ends when its time is up."""
    call = functools.partial(function, *args, **kwargs)
    return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)


def _check_app_settings(app_concurrency: Any, app_timeout: Any) -> None:
    if isinstance(app_concurrency, bool) or not isinstance(app_concurrency, int):
        raise UsageError(
            f"app_concurrency must be a whole number of rows, got {type(app_concurrency).__name__}"
        )
    if app_concurrency < 1:
        raise UsageError(f"app_concurrency must be at least 1, got {app_concurrency}")
    if app_timeout is not None:
        if isinstance(app_timeout, bool) or not isinstance(app_timeout, (int, float)):
            raise UsageError(
                f"app_timeout must be a number of seconds or None, got {type(app_timeout).__name__}"
            )
        if not (app_timeout > 0 and math.isfinite(app_timeout)):
            raise UsageError(
                f"app_timeout must be more than 0 seconds (or None for no limit), got {app_timeout!r}"
            )


def _check_rows(data: EvaluationDataset) -> list[SingleTurnSample]:
    """The dataset's rows, refused unless each is a single-turn sample with a question."""
    if not len(data):
        raise UsageError("the dataset has no rows")
    if data.kind != "single_turn":
        raise UsageError(
            "evaluating an application needs single-turn rows (a user_input question per row); "
            "the dataset is multi-turn"
        )
    missing = [index for index, sample in enumerate(data) if not sample.has("user_input")]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise UsageError(
            f"{len(missing)} row(s) have no user_input to ask the application (index {shown})"
        )
    return [sample for sample in data if isinstance(sample, SingleTurnSample)]  # all, by kind


def _check_metrics_fit(metrics: list[Metric], data: EvaluationDataset) -> None:
    """Each metric must find its fields once the application's answers are in."""
    placeholder = {"response": "answer", "retrieved_contexts": ["context"]}
    preview = EvaluationDataset([sample.model_copy(update=placeholder) for sample in data])
    for metric in metrics:
        check_metric_fits(metric, preview)


def _check_app_filled(metrics: list[Metric], answered: EvaluationDataset, app_name: str) -> None:
    """A metric needing what the application never reported (say, contexts from an app whose
    retrieval assay cannot see) would skip every row: that is refused, saying so."""
    for metric in metrics:
        try:
            check_metric_fits(metric, answered)
        except UsageError as exc:
            raise UsageError(
                f"{exc}: the {app_name} reported none for any of the {len(answered)} row(s) it "
                "answered (see the integration's options for where its output is read)"
            ) from None


def _failure(exc: BaseException, app_name: str, timeout: float | None, timed_out: bool) -> Error:
    if timed_out:
        return Error(
            error_type="ApplicationTimeout",
            message=f"the {app_name} gave no answer within {timeout:g} s for this row "
            "(raise app_timeout=, or lower app_concurrency)",
        )
    leaf = first_leaf(exc)
    detail = str(leaf) or repr(leaf)
    return Error(
        error_type="ApplicationError",
        message=f"the {app_name} failed on this row: {type(leaf).__name__}: {detail}",
    )


def _checked_answer(answer: Any, app_name: str) -> AppAnswer:
    if not isinstance(answer, AppAnswer):
        raise UnreadableAppOutput(f"the {app_name} adapter returned {type(answer).__name__}")
    if not isinstance(answer.response, str):
        raise UnreadableAppOutput(
            f"the {app_name}'s answer is a {type(answer.response).__name__}, not text"
        )
    contexts = answer.retrieved_contexts
    if contexts is not None and not all(isinstance(text, str) for text in contexts):
        raise UnreadableAppOutput(f"the {app_name}'s retrieved contexts are not all text")
    return answer


async def ask_all(
    ask: Ask,
    data: Sequence[SingleTurnSample],
    *,
    app_name: str,
    app_concurrency: int,
    app_timeout: float | None,
    show_progress: bool,
    strict: bool,
) -> list[AppAnswer | Error]:
    """Every row's answer or typed failure, in dataset order; at most `app_concurrency` at once."""
    answers: list[AppAnswer | Error | None] = [None] * len(data)
    queue = iter(range(len(data)))
    failed: list[ExceptionInRunner] = []

    async def worker(progress: CellProgress, stop: anyio.CancelScope) -> None:
        for row in queue:
            scope: anyio.CancelScope | None = None
            try:
                with anyio.fail_after(app_timeout) as scope:
                    answer = await ask(data[row])
                answers[row] = _checked_answer(answer, app_name)
            except Exception as exc:
                timed_out = (
                    isinstance(exc, TimeoutError) and scope is not None and scope.cancel_called
                )
                answers[row] = _failure(exc, app_name, app_timeout, timed_out)
            outcome = answers[row]
            progress.advance(failed=isinstance(outcome, Error))
            if strict and isinstance(outcome, Error):
                failed.append(ExceptionInRunner(row, app_name, outcome.error_type, outcome.message))
                stop.cancel()
                return

    title = f"Asking the {app_name}"
    with CellProgress(len(data), enabled=show_progress, title=title, unit="rows") as progress:
        async with anyio.create_task_group() as group:
            for _ in range(min(app_concurrency, len(data))):
                group.start_soon(worker, progress, group.cancel_scope)
    if failed:
        raise failed[0]
    return [answer for answer in answers if answer is not None]


def _filled(sample: SingleTurnSample, answer: AppAnswer | Error) -> SingleTurnSample:
    if isinstance(answer, Error):
        return sample.model_copy(update=dict.fromkeys(APP_FIELDS))
    return sample.model_copy(
        update={
            "response": answer.response,
            "retrieved_contexts": list(answer.retrieved_contexts)
            if answer.retrieved_contexts is not None
            else None,
        }
    )


async def aevaluate_app(
    ask: Ask,
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    *,
    llm: Any = None,
    embeddings: Any = None,
    app_name: str = "application",
    app_concurrency: int = 8,
    app_timeout: float | None = 300.0,
    column_map: Mapping[str, str] | None = None,
    show_progress: bool = True,
    raise_exceptions: bool = False,
    strict: bool = False,
    **evaluate_options: Any,
) -> EvaluationResult:
    """Ask the application (through `ask`) for every row's answer, then score the rows.

    ask: an async function from a sample to an `AppAnswer`; the framework adapters build it.
    dataset, metrics, llm, embeddings, column_map: as for `assay.evaluate`.
    app_concurrency: rows the application is asked at once (default 8).
    app_timeout: seconds one application call may take before its row is an `ApplicationTimeout`
        error (None: no limit).
    raise_exceptions / strict: stop at the first failed application call (or failed cell),
        raising `ExceptionInRunner` naming the row.
    evaluate_options: the engine's other settings (`max_concurrency`, `timeout`, `budget`,
        `run_config`, `callbacks`, `experiment_name`, `run_dir`, `batch_size`) for the scoring.
        Callbacks see the answered rows, numbered among themselves.
    """
    for refused in ("return_executor", "executor"):
        if evaluate_options.get(refused):
            raise UsageError(f"{refused}= is not available when evaluating an application")
    _check_app_settings(app_concurrency, app_timeout)
    data = coerce_dataset(dataset, column_map)
    rows = _check_rows(data)
    chosen = coerce_metrics(metrics)
    _check_metrics_fit(chosen, data)
    llm, embeddings = coerce_llm(llm), coerce_embeddings(embeddings)
    stop_early = bool(strict or raise_exceptions)

    started = time.perf_counter()
    answers = await ask_all(
        ask,
        rows,
        app_name=app_name,
        app_concurrency=app_concurrency,
        app_timeout=app_timeout,
        show_progress=show_progress,
        strict=stop_early,
    )
    filled = [_filled(sample, answer) for sample, answer in zip(rows, answers, strict=True)]
    answered = [row for row, answer in enumerate(answers) if not isinstance(answer, Error)]

    if answered:
        scoring = EvaluationDataset([filled[row] for row in answered], name=data.name)
        _check_app_filled(chosen, scoring, app_name)
        scored = await aevaluate(
            scoring,
            chosen,
            llm=llm,
            embeddings=embeddings,
            show_progress=show_progress,
            strict=stop_early,
            **evaluate_options,
        )
        assert isinstance(scored, EvaluationResult)
        specs, names = scored.metric_specs, scored.metric_names
        by_row = dict(zip(answered, zip(scored.outcomes, scored.usages, strict=True), strict=True))
        run_dir, experiment_name = scored.run_dir, scored.experiment_name
    else:  # nothing to score: every cell is the application's failure
        specs = [metric.spec() for metric in chosen]
        names = [spec["name"] for spec in specs]
        by_row = {}
        run_dir, experiment_name = None, evaluate_options.get("experiment_name")

    outcomes: list[dict[str, Outcome]] = []
    usages: list[dict[str, Usage]] = []
    for row, answer in enumerate(answers):
        if isinstance(answer, Error):
            outcomes.append(dict.fromkeys(names, answer))
            usages.append({name: Usage() for name in names})
        else:
            row_outcomes, row_usages = by_row[row]
            outcomes.append(row_outcomes)
            usages.append(row_usages)
    return EvaluationResult(
        EvaluationDataset(filled, name=data.name),
        specs,
        outcomes,
        usages=usages,
        seconds=time.perf_counter() - started,
        run_dir=run_dir,
        experiment_name=experiment_name,
    )


def evaluate_app(ask: Ask, dataset: Any, metrics: Any = None, **options: Any) -> EvaluationResult:
    """Synchronous twin of `aevaluate_app` (same parameters); works inside a running loop too."""
    return run_sync(aevaluate_app(ask, dataset, metrics, **options))


__all__ = [
    "AppAnswer",
    "Ask",
    "UnreadableAppOutput",
    "aevaluate_app",
    "evaluate_app",
    "in_thread",
]
