"""Evaluate a LangChain application, and score metrics from inside LangChain (extra `assay[langchain]`).

    from assay.integrations.langchain import evaluate_chain
    result = evaluate_chain(rag_chain, dataset, [Faithfulness()], llm=judge)

`evaluate_chain` invokes any Runnable (an LCEL chain, a retriever-backed QA chain, an agent
executor) once per row through `assay.integrations._apps` (concurrently, each call bounded in
time, a failed call a typed `ApplicationError` for that row), reads the answer and the retrieved
documents from what it returns, and scores. Retrieved documents are taken from the output when
it carries them (`source_documents`, `context`, `documents`, ... or `contexts_key=`), else from
the retrievers the run called, which LangChain reports through its callbacks.

`EvaluatorChain(metric)` is the other direction: a Runnable whose input is a sample's fields
(`user_input`/`question`, `response`/`answer`, `retrieved_contexts`/`contexts`,
`reference`/`ground_truth`) and whose output is `{metric name: score}`, scored by assay's engine;
`RagasEvaluatorChain` is the legacy QA-chain form (`query`, `result`, `source_documents` in,
`<metric>_score` out). Both also serve LangSmith as run evaluators (`evaluate_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay._util.deps import require
from assay._util.sync import run_sync
from assay.engine.run import aevaluate
from assay.errors import RunFailed, UsageError
from assay.integrations._apps import AppAnswer, UnreadableAppOutput, aevaluate_app
from assay.metrics.base import Metric
from assay.metrics.registry import create_metric
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Error, Ok
from assay.schema.result import EvaluationResult
from assay.schema.samples import SingleTurnSample

require("langchain_core", extra="langchain", package="langchain-core", feature="LangChain apps")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_core.runnables import Runnable, RunnableConfig  # noqa: E402

# Where common chains put their answer and their retrieved documents, in the order tried.
ANSWER_KEYS = ("answer", "response", "result", "output", "output_text", "text")
CONTEXT_KEYS = ("source_documents", "context", "documents", "retrieved_contexts", "contexts")


class RetrievedDocuments(BaseCallbackHandler):
    """Collects the documents every retriever returned during one chain run."""

    run_inline = True  # called on the run's own loop: nothing to synchronise

    def __init__(self) -> None:
        self.documents: list[Document] = []

    def on_retriever_end(self, documents: Sequence[Document], **kwargs: Any) -> None:
        self.documents.extend(documents)


def _text_of(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.text if isinstance(value.text, str) else str(value.text())
    raise UnreadableAppOutput(f"{what} is a {type(value).__name__}, not text or a message")


def _contexts_of(value: Any, what: str) -> list[str]:
    if isinstance(value, (str, Document)):
        value = [value]
    if not isinstance(value, Sequence):
        raise UnreadableAppOutput(f"{what} is a {type(value).__name__}, not a list of documents")
    texts = []
    for position, item in enumerate(value):
        if isinstance(item, Document):
            texts.append(item.page_content)
        elif isinstance(item, str):
            texts.append(item)
        else:
            raise UnreadableAppOutput(
                f"{what}[{position}] is a {type(item).__name__}, not a Document or text"
            )
    return texts


def read_chain_output(
    output: Any,
    *,
    response_key: str | None = None,
    contexts_key: str | None = None,
    retrieved: Sequence[Document] = (),
) -> AppAnswer:
    """The answer and contexts in a chain's output (text, a message, or a dict of them).
    Contexts come from the output if it has them, else from the documents retrievers returned."""
    contexts: list[str] | None = None
    if isinstance(output, Mapping):
        keys = ", ".join(map(repr, output)) or "none"
        if response_key is not None:
            if response_key not in output:
                raise UnreadableAppOutput(
                    f"the chain's output has no {response_key!r} (response_key); its keys: {keys}"
                )
            answer_key = response_key
        else:
            found = [key for key in ANSWER_KEYS if key in output]
            if not found:
                raise UnreadableAppOutput(
                    f"no answer in the chain's output (looked for {', '.join(ANSWER_KEYS)}; its "
                    f"keys: {keys}); name it with response_key="
                )
            answer_key = found[0]
        response = _text_of(output[answer_key], f"output[{answer_key!r}]")
        if contexts_key is not None:
            if contexts_key not in output:
                raise UnreadableAppOutput(
                    f"the chain's output has no {contexts_key!r} (contexts_key); its keys: {keys}"
                )
            contexts = _contexts_of(output[contexts_key], f"output[{contexts_key!r}]")
        else:
            for key in CONTEXT_KEYS:
                if key in output and key != answer_key:
                    contexts = _contexts_of(output[key], f"output[{key!r}]")
                    break
    else:
        if response_key is not None or contexts_key is not None:
            raise UnreadableAppOutput(
                f"response_key/contexts_key need a dict output; the chain returned a "
                f"{type(output).__name__}"
            )
        response = _text_of(output, "the chain's output")
    if contexts is None and retrieved:
        contexts = [document.page_content for document in retrieved]
    return AppAnswer(response=response, retrieved_contexts=contexts)


def chain_asker(
    chain: Any,
    *,
    input_key: str | None = None,
    make_input: Callable[[SingleTurnSample], Any] | None = None,
    response_key: str | None = None,
    contexts_key: str | None = None,
    parse_output: Callable[[Any], AppAnswer] | None = None,
    config: RunnableConfig | None = None,
) -> Callable[[SingleTurnSample], Any]:
    """How to ask `chain` one row's question: see `evaluate_chain` for the options."""
    if not isinstance(chain, Runnable):
        raise UsageError(
            f"chain must be a LangChain Runnable (an LCEL chain, a retriever chain...), got "
            f"{type(chain).__name__}"
        )
    if input_key is not None and make_input is not None:
        raise UsageError("give input_key= or make_input=, not both")

    async def ask(sample: SingleTurnSample) -> AppAnswer:
        if make_input is not None:
            chain_input = make_input(sample)
        elif input_key is not None:
            chain_input = {input_key: sample.user_input}
        else:
            chain_input = sample.user_input
        recorder = RetrievedDocuments()
        run_config = RunnableConfig(**(config or {}))  # a copy: the caller's stays as it was
        callbacks = run_config.get("callbacks")
        if callbacks is None:
            run_config["callbacks"] = [recorder]
        elif isinstance(callbacks, list):
            run_config["callbacks"] = [*callbacks, recorder]
        else:  # a callback manager of the caller's: add ours to a copy
            manager = callbacks.copy()
            manager.add_handler(recorder, inherit=True)
            run_config["callbacks"] = manager
        output = await chain.ainvoke(chain_input, config=run_config)
        if parse_output is not None:
            return parse_output(output)
        return read_chain_output(
            output,
            response_key=response_key,
            contexts_key=contexts_key,
            retrieved=recorder.documents,
        )

    return ask


async def aevaluate_chain(
    chain: Any,
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    *,
    input_key: str | None = None,
    make_input: Callable[[SingleTurnSample], Any] | None = None,
    response_key: str | None = None,
    contexts_key: str | None = None,
    parse_output: Callable[[Any], AppAnswer] | None = None,
    config: RunnableConfig | None = None,
    **options: Any,
) -> EvaluationResult:
    """Invoke `chain` on every row's `user_input`, then score its answers with `metrics`.

    input_key: pass `{input_key: user_input}` instead of the question text itself;
        make_input: build the chain's input from the whole sample instead.
    response_key / contexts_key: where the answer and the documents are in a dict output (by
        default the first of ANSWER_KEYS / CONTEXT_KEYS present; documents the chain's
        retrievers returned are used when the output has none); parse_output: a function from
        the chain's output to an `AppAnswer`, for anything else.
    config: a RunnableConfig for every call (callbacks, tags, ...).
    options: those of `aevaluate_app` (`llm`, `embeddings`, `app_concurrency`, `app_timeout`,
        `show_progress`, the engine's `max_concurrency`, `timeout`, `budget`, ...).
    """
    ask = chain_asker(
        chain,
        input_key=input_key,
        make_input=make_input,
        response_key=response_key,
        contexts_key=contexts_key,
        parse_output=parse_output,
        config=config,
    )
    options.setdefault("app_name", "chain")
    return await aevaluate_app(ask, dataset, metrics, **options)


def evaluate_chain(
    chain: Any, dataset: Any, metrics: Any = None, **options: Any
) -> EvaluationResult:
    """Synchronous twin of `aevaluate_chain` (same parameters)."""
    return run_sync(aevaluate_chain(chain, dataset, metrics, **options))


# -- scoring inside LangChain ---------------------------------------------------------------
def _documents_as_text(value: Any) -> Any:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item.page_content if isinstance(item, Document) else item for item in value]
    return value


class EvaluatorChain(Runnable[dict[str, Any], dict[str, Any]]):
    """A Runnable scoring `metric` on its input (one sample's fields), e.g. as the last step of a
    chain or as a LangSmith evaluator. The output is `{output_key: score}`.

    llm / embeddings: the judge models (anything `assay.evaluate` takes; by default the
    configured ones). A cell that fails raises `RunFailed` with its cause; inputs the metric
    cannot score (a missing field) raise `UsageError`. `column_map` renames input keys as in
    `evaluate` ({sample field: your key})."""

    input_renames: Mapping[str, str] = {}

    def __init__(
        self,
        metric: Metric | str,
        *,
        llm: Any = None,
        embeddings: Any = None,
        run_config: Any = None,
        column_map: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(metric, str):
            metric = create_metric(metric)
        if not isinstance(metric, Metric):
            raise UsageError(f"metric must be a metric object or name, got {type(metric).__name__}")
        if metric.sample_kind != "single_turn":
            raise UsageError(
                f"EvaluatorChain scores single-turn metrics; {metric.name} is {metric.sample_kind}"
            )
        if kwargs:
            raise UsageError(f"EvaluatorChain got unknown argument(s): {', '.join(kwargs)}")
        self.metric = metric
        self.llm = llm
        self.embeddings = embeddings
        self.run_config = run_config
        self.column_map = dict(column_map or {})

    @property
    def output_key(self) -> str:
        return self.metric.name

    @property
    def input_keys(self) -> list[str]:
        return list(self.metric.fields_for("single_turn")[0])

    @property
    def output_keys(self) -> list[str]:
        return [self.output_key]

    def _row(self, inputs: Any) -> dict[str, Any]:
        if not isinstance(inputs, Mapping):
            raise UsageError(
                f"{type(self).__name__} takes a dict of sample fields, got {type(inputs).__name__}"
            )
        row = {self.input_renames.get(key, key): _documents_as_text(v) for key, v in inputs.items()}
        return row

    async def _ascore_rows(self, rows: list[dict[str, Any]]) -> list[Any]:
        data = EvaluationDataset.from_list(rows, column_map=self.column_map or None)
        result = await aevaluate(
            data,
            [self.metric],
            llm=self.llm,
            embeddings=self.embeddings,
            run_config=self.run_config,
            show_progress=False,
        )
        assert isinstance(result, EvaluationResult)
        values = []
        for row in range(len(data)):
            outcome = result.outcome(row, self.metric.name)
            if isinstance(outcome, Ok):
                values.append(outcome.value)
            elif isinstance(outcome, Error):
                raise RunFailed(row, self.metric.name, outcome.error_type, outcome.message)
            else:
                raise UsageError(f"{self.metric.name} cannot score this input: {outcome.reason}")
        return values

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        (value,) = await self._ascore_rows([self._row(input)])
        return {self.output_key: value}

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return run_sync(self.ainvoke(input, config, **kwargs))

    def __call__(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The legacy Chain call: the inputs with the score added."""
        return {**inputs, **self.invoke(inputs)}

    async def abatch(
        self, inputs: list[dict[str, Any]], config: Any = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """All inputs scored in one engine run (concurrently, one judge budget)."""
        values = await self._ascore_rows([self._row(item) for item in inputs])
        return [{self.output_key: value} for value in values]

    def batch(
        self, inputs: list[dict[str, Any]], config: Any = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        return run_sync(self.abatch(inputs, config, **kwargs))

    def evaluate_run(self, run: Any, example: Any = None, **kwargs: Any) -> Any:
        """A LangSmith run evaluator: the run's outputs plus the example's question (and its
        `ground_truth`/`reference`, when the metric needs one) scored as one sample."""
        evaluation = require("langsmith.evaluation", extra="langchain", package="langsmith")
        inputs = dict(run.outputs or {})
        example_inputs = dict(getattr(example, "inputs", None) or {})
        example_outputs = dict(getattr(example, "outputs", None) or {})
        for key in ("question", "user_input", "query"):
            if key in example_inputs:
                inputs.setdefault("user_input", example_inputs[key])
                break
        if "reference" in self.input_keys:
            for key in ("ground_truth", "reference"):
                if key in example_outputs:
                    inputs.setdefault("reference", example_outputs[key])
                    break
            else:
                raise UsageError(
                    f"{self.metric.name} needs a reference: the example's outputs have no "
                    "ground_truth or reference"
                )
        score = self.invoke(inputs)[self.output_key]
        return evaluation.EvaluationResult(key=self.metric.name, score=score)


class RagasEvaluatorChain(EvaluatorChain):
    """The legacy QA form: inputs `query`, `result`, `source_documents` (and `ground_truths` or
    `ground_truth` when the metric needs a reference); output `<metric>_score`."""

    input_renames: Mapping[str, str] = {
        "query": "user_input",
        "result": "response",
        "source_documents": "retrieved_contexts",
        "ground_truths": "reference",
    }

    @property
    def output_key(self) -> str:
        return f"{self.metric.name}_score"

    def _row(self, inputs: Any) -> dict[str, Any]:
        row = super()._row(inputs)
        reference = row.get("reference")
        if isinstance(reference, list):  # the legacy chains took a list of ground truths
            row["reference"] = reference[0] if reference else None
        return row

    def evaluate(
        self,
        examples: Sequence[Mapping[str, Any]],
        predictions: Sequence[Mapping[str, Any]],
        question_key: str = "query",
        prediction_key: str = "result",
    ) -> list[dict[str, Any]]:
        """Score a batch of QA results: `examples[i]` holds the question (and ground truth),
        `predictions[i]` the answer and `source_documents`."""
        if len(examples) != len(predictions):
            raise UsageError(
                f"examples ({len(examples)}) and predictions ({len(predictions)}) must pair up"
            )
        rows = []
        for example, prediction in zip(examples, predictions, strict=True):
            row = {
                "query": example[question_key],
                "result": prediction[prediction_key],
                "source_documents": prediction.get("source_documents", []),
            }
            for key in ("ground_truths", "ground_truth"):
                if key in example:
                    row[key] = example[key]
            rows.append(row)
        return self.batch(rows)


__all__ = [
    "ANSWER_KEYS",
    "CONTEXT_KEYS",
    "EvaluatorChain",
    "RagasEvaluatorChain",
    "RetrievedDocuments",
    "aevaluate_chain",
    "chain_asker",
    "evaluate_chain",
    "read_chain_output",
]
