"""Ragas' evaluate() parameters are accepted and honoured (issue #15, 6): metrics=None, run_config,
batch_size, raise_exceptions, experiment_name, return_executor, token_usage_parser, allow_nest_asyncio,
positional llm; RunConfig, ExceptionInRunner, Executor, set_logging_level."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from assay import (
    ExceptionInRunner,
    Executor,
    Faithfulness,
    RunConfig,
    aevaluate,
    evaluate,
    faithfulness,
    set_logging_level,
)
from assay.engine.plan import coerce_metrics
from assay.errors import RunFailed, UsageError
from assay.models import RetryPolicy
from tests.engine.scripted_metrics import ConcurrencyProbe, ScriptedMetric
from tests.metrics.rag.scripted import judge, verdict_lines

ROWS = [{"response": value} for value in ("0.5", "1", "raise", "0.25")]
CONTEXTS = ["Paris is the capital of France."]


def test_metrics_none_is_ragas_default_list():
    assert [m.name for m in coerce_metrics(None)] == [
        "answer_relevancy",
        "context_precision",
        "faithfulness",
        "context_recall",
    ]
    # the defaults are checked like any metric: a dataset without what they need is refused up front
    with pytest.raises(UsageError, match="context_precision needs reference"):
        evaluate(
            [{"user_input": "q", "response": "r", "retrieved_contexts": CONTEXTS}],
            llm=judge()[0],
            show_progress=False,
        )


def test_raise_exceptions_is_strict_and_raises_exception_in_runner():
    with pytest.raises(ExceptionInRunner) as info:
        evaluate(
            ROWS, [ScriptedMetric()], raise_exceptions=True, max_concurrency=1, show_progress=False
        )
    assert (
        isinstance(info.value, RunFailed)
        and info.value.row == 2
        and "scripted failure" in str(info.value)
    )
    # the default records the error and goes on
    result = evaluate(ROWS, [ScriptedMetric()], show_progress=False)
    assert result.outcome(2, "test_scripted").status == "error"


def test_ragas_parameters_in_ragas_order_positionally():
    llm, provider = judge(verdict_lines("yes"))
    result = evaluate(
        [{"response": "Paris is the capital.", "retrieved_contexts": CONTEXTS}],
        [Faithfulness()],
        llm,
        None,
        "my run",
        None,
        None,
        None,
        False,
        None,
        False,
        None,
        False,
    )
    assert result["faithfulness"] == [1.0] and result.experiment_name == "my run"
    assert len(provider.requests) == 1


def test_accepted_no_ops_change_nothing():
    plain = evaluate(ROWS[:2], [ScriptedMetric()], show_progress=False)
    given = evaluate(
        ROWS[:2],
        [ScriptedMetric()],
        show_progress=False,
        token_usage_parser=lambda r: None,
        allow_nest_asyncio=False,
        in_ci=True,
    )
    assert given.scores == plain.scores == [{"test_scripted": 0.5}, {"test_scripted": 1.0}]


# -- RunConfig ---------------------------------------------------------------------------------------
def test_run_config_timeout_is_the_cell_timeout():
    result = evaluate(
        [{"response": "sleep:2"}, {"response": "1"}],
        [ScriptedMetric()],
        run_config=RunConfig(timeout=0.1),
        show_progress=False,
    )
    slow = result.outcome(0, "test_scripted")
    assert slow.status == "error" and slow.error_type == "Timeout" and "0.1 s" in slow.message
    assert result["test_scripted"][1] == 1.0


@pytest.mark.parametrize(
    ("run_config", "batch_size", "peak"),
    [
        (RunConfig(max_workers=2), None, 2),
        (None, 3, 3),
        (RunConfig(max_workers=4), 2, 2),
        (RunConfig(max_workers=1), None, 1),
    ],
)
def test_max_workers_and_batch_size_bound_the_cells_in_flight(run_config, batch_size, peak):
    probe = ConcurrencyProbe()
    evaluate(
        [{"response": str(i)} for i in range(12)],
        [probe],
        run_config=run_config,
        batch_size=batch_size,
        show_progress=False,
    )
    assert probe.state["peak"] == peak


def test_unset_fields_leave_assays_defaults():
    config = RunConfig(max_workers=3)
    assert config.given == {"max_workers"} and config.timeout == 180  # Ragas' value, shown...
    assert config.retry_policy() is None  # ...but only set fields change anything
    result = evaluate(
        [{"response": "sleep:0.3"}],
        [ScriptedMetric()],
        run_config=RunConfig(max_workers=-1),
        show_progress=False,
    )
    assert result["test_scripted"] == [1.0]


def test_retry_fields_become_the_run_models_retry_policy_without_touching_the_callers():
    config = RunConfig(max_retries=3, max_wait=5)
    assert config.retry_policy() == RetryPolicy(max_attempts=3, initial_wait=1.0, max_wait=5.0)
    assert RunConfig(max_retries=0).retry_policy().max_attempts == 1
    from assay.engine.run import _prepare_metrics

    default_llm, _ = judge()
    explicit = RetryPolicy(max_attempts=2)
    own, _ = judge()
    own.retry = explicit
    prepared = _prepare_metrics(
        [Faithfulness(), Faithfulness(name="own", llm=own)],
        default_llm,
        None,
        config.retry_policy(),
    )
    assert (
        prepared[0].llm.retry == config.retry_policy()
        and prepared[0].llm.provider is default_llm.provider
    )
    assert default_llm.retry == RetryPolicy()  # the caller's object is not changed
    assert prepared[1].llm is own and own.retry == explicit  # an explicit policy is kept


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": "60"}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_wait": -1}, "max_wait"),
        ({"max_workers": 0}, "max_workers"),
        ({"max_workers": 2.5}, "max_workers"),
        ({"exception_types": "ValueError"}, "exception_types"),
        ({"seed": "42"}, "seed"),
    ],
)
def test_bad_run_config_values_are_one_line_errors_naming_the_field(kwargs, field):
    with pytest.raises(UsageError, match=field):
        RunConfig(**kwargs)


def test_conflicting_settings_are_refused():
    with pytest.raises(UsageError, match="timeout"):
        evaluate(
            ROWS,
            [ScriptedMetric()],
            run_config=RunConfig(timeout=60),
            timeout=30,
            show_progress=False,
        )
    with pytest.raises(UsageError, match="max_workers"):
        evaluate(
            ROWS,
            [ScriptedMetric()],
            run_config=RunConfig(max_workers=4),
            max_concurrency=2,
            show_progress=False,
        )
    with pytest.raises(UsageError, match="run_config"):
        evaluate(ROWS, [ScriptedMetric()], run_config={"timeout": 60}, show_progress=False)
    with pytest.raises(UsageError, match="batch_size"):
        evaluate(ROWS, [ScriptedMetric()], batch_size=0, show_progress=False)
    with pytest.raises(UsageError, match="experiment_name"):
        evaluate(ROWS, [ScriptedMetric()], experiment_name=3, show_progress=False)


def test_run_config_seed_and_rng():
    first, second = RunConfig(seed=7).rng.random(), RunConfig(seed=7).rng.random()
    assert first == second and "seed=7" in repr(RunConfig(seed=7))


# -- return_executor ---------------------------------------------------------------------------------
def test_return_executor_runs_nothing_until_results():
    probe = ConcurrencyProbe()
    executor = evaluate(
        [{"response": "1"}, {"response": "2"}],
        [probe, ScriptedMetric()],
        return_executor=True,
        show_progress=False,
    )
    assert isinstance(executor, Executor) and not executor.is_cancelled()
    assert probe.state["peak"] == 0
    assert executor.results() == [1.0, 1.0, 1.0, 2.0]  # row 0's metrics, then row 1's
    assert probe.state["peak"] >= 1
    assert executor.results() == [1.0, 1.0, 1.0, 2.0]  # run once
    assert executor.evaluation_result()["test_scripted"] == [1.0, 2.0]


def test_cancel_before_results_starts_no_cell():
    executor = evaluate(ROWS, [ScriptedMetric()], return_executor=True, show_progress=False)
    executor.cancel()
    assert executor.is_cancelled()
    assert executor.results() == [None] * 4
    assert {
        executor.evaluation_result().outcome(i, "test_scripted").error_type for i in range(4)
    } == {"Cancelled"}


def test_cancel_from_another_thread_stops_the_run_and_keeps_what_finished(tmp_path):
    rows = [{"response": "0.5"}] + [{"response": "sleep:30"}] * 3
    executor = evaluate(
        rows,
        [ScriptedMetric()],
        return_executor=True,
        show_progress=False,
        run_dir=tmp_path / "run",
    )
    threading.Timer(0.3, executor.cancel).start()
    began = time.perf_counter()
    values = executor.results()
    assert time.perf_counter() - began < 10
    assert values == [0.5, None, None, None]
    result = executor.evaluation_result()
    assert [result.outcome(i, "test_scripted").status for i in range(4)] == [
        "ok",
        "error",
        "error",
        "error",
    ]
    assert result.outcome(1, "test_scripted").error_type == "Cancelled"
    # cancelled cells are not checkpointed: a resumed run computes them
    lines = (tmp_path / "run" / "cells.jsonl").read_text().splitlines()
    assert len(lines) == 1


@pytest.mark.anyio
async def test_aevaluate_returns_an_executor_too():
    executor = await aevaluate(
        ROWS[:2], [ScriptedMetric()], return_executor=True, show_progress=False
    )
    assert await executor.aresults() == [0.5, 1.0]


def test_executor_reraises_the_runs_error():
    executor = evaluate(
        ROWS,
        [ScriptedMetric()],
        raise_exceptions=True,
        return_executor=True,
        show_progress=False,
        max_concurrency=1,
    )
    for _ in range(2):
        with pytest.raises(ExceptionInRunner):
            executor.results()


# -- singletons are never bound to one run's model ------------------------------------------------------
def test_a_singleton_takes_each_runs_model_and_stays_unbound():
    row = [{"response": "Paris is the capital.", "retrieved_contexts": CONTEXTS}]
    first, first_calls = judge(verdict_lines("yes"))
    second, second_calls = judge(verdict_lines("no"))
    assert evaluate(row, [faithfulness], llm=first, show_progress=False)["faithfulness"] == [1.0]
    assert faithfulness.llm is None
    assert evaluate(row, [faithfulness], llm=second, show_progress=False)["faithfulness"] == [0.0]
    assert (len(first_calls.requests), len(second_calls.requests)) == (1, 1)


# -- set_logging_level ---------------------------------------------------------------------------------
def test_set_logging_level_reads_ragas_names_as_assays():
    logger = set_logging_level("ragas.cache", logging.DEBUG)
    assert logger.name == "assay.cache" and logger.level == logging.DEBUG and logger.handlers
    assert set_logging_level("assay.callbacks", "warning").level == logging.WARNING
    for bad in ("", 3):
        with pytest.raises(UsageError, match="logger_name"):
            set_logging_level(bad, logging.INFO)
    with pytest.raises(UsageError, match="level"):
        set_logging_level("assay", "LOUD")
