"""Callbacks (issue #15, 6): run, row and metric start/end with typed outcomes and usage; async hooks;
LangChain callback handlers and managers see nested chains; a failing callback does not stop the run."""

from __future__ import annotations

import logging
import math

import pytest

from assay import EvaluationCallback, Faithfulness, SingleTurnSample, evaluate
from assay.errors import RunFailed, UsageError
from assay.metrics.callbacks import RAGAS_EVALUATION_CHAIN_NAME
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.usage import Usage
from tests.engine.scripted_metrics import ScriptedMetric
from tests.metrics.rag.scripted import judge, verdict_lines

ROWS = [{"response": "0.5"}, {"response": "raise"}, {}]


class Recorder(EvaluationCallback):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_run_start(self, name, n_rows, metrics):
        self.events.append(("run_start", name, n_rows, tuple(metrics)))

    def on_run_end(self, result):
        self.events.append(("run_end", result.scores))

    def on_run_error(self, error):
        self.events.append(("run_error", type(error).__name__))

    def on_row_start(self, row, sample):
        self.events.append(("row_start", row, sample.response))

    def on_row_end(self, row, outcomes):
        self.events.append(
            ("row_end", row, {name: outcome.status for name, outcome in outcomes.items()})
        )

    def on_metric_start(self, row, metric):
        self.events.append(("metric_start", row, metric))

    def on_metric_end(self, row, metric, outcome, usage):
        self.events.append(
            ("metric_end", row, metric, type(outcome).__name__, type(usage).__name__)
        )


def test_run_row_and_metric_events_in_order_with_typed_outcomes():
    recorder = Recorder()
    evaluate(
        ROWS,
        [ScriptedMetric()],
        callbacks=[recorder],
        experiment_name="nightly",
        max_concurrency=1,
        show_progress=False,
    )
    assert recorder.events == [
        ("run_start", "nightly", 3, ("test_scripted",)),
        ("row_start", 0, "0.5"),
        ("metric_start", 0, "test_scripted"),
        ("metric_end", 0, "test_scripted", "Ok", "Usage"),
        ("row_end", 0, {"test_scripted": "ok"}),
        ("row_start", 1, "raise"),
        ("metric_start", 1, "test_scripted"),
        ("metric_end", 1, "test_scripted", "Error", "Usage"),
        ("row_end", 1, {"test_scripted": "error"}),
        ("row_start", 2, None),
        ("metric_start", 2, "test_scripted"),
        ("metric_end", 2, "test_scripted", "Skipped", "Usage"),
        ("row_end", 2, {"test_scripted": "skipped"}),
        ("run_end", [{"test_scripted": 0.5}, {"test_scripted": None}, {"test_scripted": None}]),
    ]


def test_a_row_ends_after_its_last_metric_and_usage_is_the_cells():
    seen: list = []

    class Usages:
        def on_metric_end(self, row, metric, outcome, usage):
            seen.append((metric, outcome.status, usage.requests))

        def on_row_end(self, row, outcomes):
            seen.append(("row_end", sorted(outcomes)))

    llm, _ = judge(verdict_lines("yes"))
    evaluate(
        [{"response": "0.5", "retrieved_contexts": ["Paris is the capital."]}],
        [Faithfulness(), ScriptedMetric(name="n")],
        llm=llm,
        callbacks=Usages(),
        show_progress=False,
        max_concurrency=1,
    )
    assert sorted(seen[:2]) == [
        ("faithfulness", "ok", 1),
        ("n", "ok", 0),
    ]  # one judge call, metered to its cell
    assert seen[2] == ("row_end", ["faithfulness", "n"])


def test_async_hooks_are_awaited_and_strict_failures_reported():
    events: list = []

    class Async:
        async def on_metric_end(self, row, metric, outcome, usage):
            events.append(outcome.status)

        async def on_run_error(self, error):
            events.append(type(error).__name__)

    with pytest.raises(RunFailed):
        evaluate(
            ROWS[:2],
            [ScriptedMetric()],
            callbacks=[Async()],
            raise_exceptions=True,
            max_concurrency=1,
            show_progress=False,
        )
    assert events == ["ok", "error", "ExceptionInRunner"]


def test_a_failing_callback_is_logged_and_the_run_goes_on(caplog):
    class Broken:
        def on_metric_end(self, row, metric, outcome, usage):
            raise RuntimeError("tracer down")

    with caplog.at_level(logging.WARNING, logger="assay.callbacks"):
        result = evaluate(ROWS[:1], [ScriptedMetric()], callbacks=[Broken()], show_progress=False)
    assert result["test_scripted"] == [0.5]
    assert "Broken.on_metric_end failed: RuntimeError: tracer down" in caplog.text

    class Strict(Broken):
        raise_error = True

    with pytest.raises(RuntimeError, match="tracer down"):
        evaluate(ROWS[:1], [ScriptedMetric()], callbacks=[Strict()], show_progress=False)


def test_something_that_is_not_a_callback_is_a_usage_error():
    with pytest.raises(UsageError, match=r"callbacks\[1\]"):
        evaluate(ROWS, [ScriptedMetric()], callbacks=[Recorder(), "tracer"], show_progress=False)


def test_direct_scoring_with_callbacks_and_timeout():
    recorder = Recorder()
    metric = ScriptedMetric()
    assert metric.single_turn_score(SingleTurnSample(response="0.25"), callbacks=[recorder]) == 0.25
    assert recorder.events == [
        ("metric_start", None, "test_scripted"),
        ("metric_end", None, "test_scripted", "Ok", "Usage"),
    ]
    with pytest.raises(ValueError, match="scripted failure"):
        metric.single_turn_score(SingleTurnSample(response="raise"), recorder)
    assert recorder.events[-1] == ("metric_end", None, "test_scripted", "Error", "Usage")
    import anyio

    async def slow():
        return await metric.single_turn_ascore(SingleTurnSample(response="sleep:5"), timeout=0.05)

    with pytest.raises(TimeoutError):
        anyio.run(slow)


# -- LangChain handlers ---------------------------------------------------------------------------------
def _langchain_handler():
    callbacks = pytest.importorskip("langchain_core.callbacks")

    class Chains(callbacks.BaseCallbackHandler):
        def __init__(self):
            self.started: dict = {}
            self.ended: list = []
            self.errors: list = []

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
            self.started[run_id] = (
                serialized["name"],
                parent_run_id,
                inputs,
                kwargs["metadata"]["type"],
            )

        def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kwargs):
            self.ended.append((self.started[run_id][0], outputs))

        def on_chain_error(self, error, *, run_id, parent_run_id=None, **kwargs):
            self.errors.append((self.started[run_id][0], str(error)))

    return Chains()


def test_langchain_handlers_see_nested_chains():
    handler = _langchain_handler()
    evaluate(
        ROWS[:2],
        [ScriptedMetric()],
        callbacks=[handler],
        experiment_name="exp",
        max_concurrency=1,
        show_progress=False,
    )
    by_name = {
        name: (parent, inputs, kind) for name, parent, inputs, kind in handler.started.values()
    }
    ids = {value[0]: key for key, value in handler.started.items()}
    assert by_name["exp"][0] is None and by_name["exp"][2] == "evaluation"
    assert by_name["row 0"][0] == ids["exp"] and by_name["row 0"][1] == {"response": "0.5"}
    metric_parents = [
        parent for name, parent, _, kind in handler.started.values() if kind == "metric"
    ]
    assert sorted(metric_parents, key=str) == sorted([ids["row 0"], ids["row 1"]], key=str)
    assert by_name["test_scripted"][1] in ({"response": "0.5"}, {"response": "raise"})
    assert ("test_scripted", {"output": 0.5}) in handler.ended
    rows = {name: outputs for name, outputs in handler.ended if name.startswith("row ")}
    # a failed cell is NaN in the chain outputs, as Ragas sends it
    assert rows["row 0"] == {"test_scripted": 0.5} and math.isnan(rows["row 1"]["test_scripted"])
    root_name, root_outputs = handler.ended[-1]
    assert root_name == "exp" and root_outputs["scores"][0] == {"test_scripted": 0.5}
    assert math.isnan(root_outputs["scores"][1]["test_scripted"])
    assert handler.errors == [("test_scripted", "ValueError: scripted failure")]


def test_without_experiment_name_the_root_chain_has_ragas_name():
    handler = _langchain_handler()
    evaluate(ROWS[:1], [ScriptedMetric()], callbacks=[handler], show_progress=False)
    roots = [name for name, parent, _, kind in handler.started.values() if parent is None]
    assert roots == ["ragas evaluation"] == [RAGAS_EVALUATION_CHAIN_NAME]


def test_a_tracer_keyed_on_the_ragas_root_chain_collects_each_rows_scores():
    """A LangChain tracer doing what Ragas' OpikTracer does: it recognises the evaluation by
    its root chain's name, makes each `row i` child a trace of its own, logs the row chain's
    outputs as that trace's scores (rounding each value), and does not persist the root."""
    base = pytest.importorskip("langchain_core.tracers.base")

    class RowScores(base.BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.evaluation = None
            self.scores: dict[str, dict[str, float]] = {}
            self.traces: list[str] = []

        def _persist_run(self, run) -> None:
            if run.id != self.evaluation:
                self.traces.append(run.name)

        def _on_chain_start(self, run) -> None:
            if run.parent_run_id is None and run.name == RAGAS_EVALUATION_CHAIN_NAME:
                self.evaluation = run.id
            elif run.parent_run_id is not None and run.parent_run_id == self.evaluation:
                run.parent_run_id = None  # a row: a trace of its own

        def _on_chain_end(self, run) -> None:
            if run.id != self.evaluation and run.name.startswith("row ") and self.evaluation:
                self.scores[run.name] = {k: round(v, 4) for k, v in run.outputs.items()}

    tracer = RowScores()
    rows = [{"response": "0.25"}, {"response": "raise"}, {"response": "0.123456"}]
    evaluate(rows, [ScriptedMetric()], callbacks=[tracer], max_concurrency=1, show_progress=False)

    assert tracer.evaluation is not None
    assert sorted(tracer.scores) == ["row 0", "row 1", "row 2"]
    assert tracer.scores["row 0"] == {"test_scripted": 0.25}
    assert math.isnan(tracer.scores["row 1"]["test_scripted"])
    assert tracer.scores["row 2"] == {"test_scripted": 0.1235}
    assert sorted(tracer.traces) == ["row 0", "row 1", "row 2"]  # the root is not a trace


def test_a_langchain_manager_and_ignore_chain():
    callbacks = pytest.importorskip("langchain_core.callbacks")
    handler, ignoring = _langchain_handler(), _langchain_handler()
    type(ignoring).ignore_chain = property(
        lambda self: True
    )  # its own class, made in _langchain_handler
    manager = callbacks.CallbackManager(handlers=[handler, ignoring])
    evaluate(ROWS[:1], [ScriptedMetric()], callbacks=manager, show_progress=False)
    assert len(handler.started) == 3 and ignoring.started == {}


def test_the_outcome_types_are_the_schemas():
    # the hooks receive assay's own typed outcomes and usage
    got: list = []

    class Types:
        def on_metric_end(self, row, metric, outcome, usage):
            got.append((type(outcome), type(usage)))

    evaluate(ROWS, [ScriptedMetric()], callbacks=[Types()], show_progress=False)
    assert {cls for cls, _ in got} == {Ok, Error, Skipped} and {cls for _, cls in got} == {Usage}
