"""Haystack: evaluate a Pipeline, score inside one, use its generators as judges (extra `assay[haystack]`).

    from assay.integrations.haystack import evaluate_pipeline
    result = evaluate_pipeline(
        rag, dataset, [Faithfulness()], llm=judge,
        query_inputs={"retriever": "query", "prompt_builder": "question"},
        response_from="llm.replies", documents_from="retriever.documents",
    )

`evaluate_pipeline` runs the pipeline once per row through `assay.integrations._apps`
(concurrently, each run bounded in time, a failed run a typed `ApplicationError` for its row):
the row's `user_input` goes to the input sockets named by `query_inputs` (by default every
pipeline input called query or question), the answer is read from `response_from` and the
contexts from `documents_from` ("component.socket"; by default the one component that returns
replies or answers, and the one that returns documents).

`RagasEvaluator(ragas_metrics=[...], evaluator_llm=...)` is a Haystack component that scores its
inputs (`query`, `response`, `documents`, `reference`, ...) and outputs `result` ({metric: score,
None where the cell failed or was skipped}) and `outcomes` (the typed outcome of each cell, the
cause included). `HaystackLLMWrapper(generator)` and `HaystackEmbeddingsWrapper(embedder)` make a
Haystack chat generator or text embedder an assay judge or embedding model.

Haystack's usage telemetry is switched off when this module imports Haystack, unless
`HAYSTACK_TELEMETRY_ENABLED` is already set: assay makes no network calls of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay._util.sync import run_sync
from assay.errors import UsageError
from assay.integrations._apps import AppAnswer, UnreadableAppOutput, aevaluate_app, in_thread
from assay.metrics.base import Metric
from assay.models.embeddings import Embeddings
from assay.models.llm import LLM
from assay.models.providers.base import Profile, Provider
from assay.models.providers.langchain import _wrapper_options, call_translated
from assay.models.types import Generation, ModelRequest, ModelResponse, Usage
from assay.schema.result import EvaluationResult
from assay.schema.samples import SingleTurnSample

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
from assay._util.deps import require

require("haystack", extra="haystack", package="haystack-ai", feature="Haystack pipelines")

from haystack import Document, component  # noqa: E402
from haystack.core.pipeline.base import PipelineBase  # noqa: E402
from haystack.dataclasses import ChatMessage, GeneratedAnswer  # noqa: E402

QUERY_SOCKETS = ("query", "question", "user_input")
ANSWER_SOCKETS = ("replies", "answers")


# -- reading a pipeline's inputs and outputs ------------------------------------------------
def _socket(path: str, what: str, pipeline: PipelineBase) -> tuple[str, str]:
    name, dot, socket = path.partition(".")
    if not dot or not name or not socket:
        raise UsageError(f"{what} must be 'component.socket', e.g. 'llm.replies', got {path!r}")
    try:
        pipeline.get_component(name)
    except ValueError as exc:
        raise UsageError(f"{what}={path!r}: the pipeline has no component {name!r}") from exc
    return name, socket


def _query_data(
    pipeline: PipelineBase, query_inputs: Mapping[str, str | Sequence[str]] | None
) -> dict[str, list[str]]:
    """{component: [input sockets]} that receive the row's question."""
    if query_inputs is None:
        found = {
            name: [socket for socket in sockets if socket in QUERY_SOCKETS]
            for name, sockets in pipeline.inputs().items()
        }
        found = {name: sockets for name, sockets in found.items() if sockets}
        if not found:
            raise UsageError(
                "no pipeline input is called query or question; say where the question goes "
                "with query_inputs={'component': 'socket'}"
            )
        return found
    chosen: dict[str, list[str]] = {}
    for name, sockets in query_inputs.items():
        names = [sockets] if isinstance(sockets, str) else list(sockets)
        _socket(f"{name}.{names[0]}", "query_inputs", pipeline)
        chosen[name] = names
    return chosen


def _text_of_reply(value: Any, where: str) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            raise UnreadableAppOutput(f"{where} is empty: the pipeline gave no answer")
        value = value[0]
    if isinstance(value, ChatMessage):
        return value.text or ""
    if isinstance(value, GeneratedAnswer):
        return str(value.data or "")
    if isinstance(value, str):
        return value
    raise UnreadableAppOutput(f"{where} holds a {type(value).__name__}, not a reply or text")


def _texts_of_documents(value: Any, where: str) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise UnreadableAppOutput(f"{where} is a {type(value).__name__}, not a list of Documents")
    texts = []
    for position, item in enumerate(value):
        if isinstance(item, Document):
            texts.append(item.content or "")
        elif isinstance(item, str):
            texts.append(item)
        else:
            raise UnreadableAppOutput(f"{where}[{position}] is a {type(item).__name__}")
    return texts


def _pick(outputs: dict[str, Any], sockets: Sequence[str], what: str, option: str) -> str | None:
    """The one 'component.socket' among the outputs whose socket is one of `sockets`."""
    found = [
        f"{name}.{socket}"
        for name, produced in outputs.items()
        if isinstance(produced, Mapping)
        for socket in produced
        if socket in sockets
    ]
    if len(found) > 1:
        raise UnreadableAppOutput(
            f"several components return {what} ({', '.join(found)}); name one with {option}="
        )
    return found[0] if found else None


def read_pipeline_output(
    outputs: dict[str, Any], response_from: str | None, documents_from: str | None
) -> AppAnswer:
    """The answer and contexts in a pipeline run's outputs ({component: {socket: value}})."""
    response_path = response_from or _pick(outputs, ANSWER_SOCKETS, "answers", "response_from")
    if response_path is None:
        raise UnreadableAppOutput(
            f"no component returned replies or answers (outputs: {', '.join(outputs) or 'none'}); "
            "name the answer with response_from='component.socket'"
        )
    documents_path = documents_from or _pick(outputs, ("documents",), "documents", "documents_from")
    name, socket = response_path.split(".", 1)
    if socket not in outputs.get(name, {}):
        raise UnreadableAppOutput(f"the pipeline's outputs have no {response_path}")
    response = _text_of_reply(outputs[name][socket], response_path)
    contexts = None
    if documents_path is not None:
        name, socket = documents_path.split(".", 1)
        if socket not in outputs.get(name, {}):
            raise UnreadableAppOutput(f"the pipeline's outputs have no {documents_path}")
        contexts = _texts_of_documents(outputs[name][socket], documents_path)
    return AppAnswer(response=response, retrieved_contexts=contexts)


def pipeline_asker(
    pipeline: Any,
    *,
    query_inputs: Mapping[str, str | Sequence[str]] | None = None,
    make_data: Callable[[SingleTurnSample], dict[str, Any]] | None = None,
    response_from: str | None = None,
    documents_from: str | None = None,
) -> Callable[[SingleTurnSample], Any]:
    """How to run `pipeline` for one row: see `evaluate_pipeline` for the options."""
    if not isinstance(pipeline, PipelineBase):
        raise UsageError(f"pipeline must be a Haystack Pipeline, got {type(pipeline).__name__}")
    if make_data is not None and query_inputs is not None:
        raise UsageError("give query_inputs= or make_data=, not both")
    targets = None if make_data is not None else _query_data(pipeline, query_inputs)
    named = [path for path in (response_from, documents_from) if path is not None]
    for path, what in zip(named, ("response_from", "documents_from"), strict=False):
        _socket(path, what, pipeline)
    # What a run returns: the named components' outputs, or every component's when guessing.
    if response_from is not None and documents_from is not None:
        include = {path.split(".", 1)[0] for path in named}
    else:
        include = {name for name, _ in pipeline.walk()}
    run_async = getattr(pipeline, "run_async", None)

    async def ask(sample: SingleTurnSample) -> AppAnswer:
        if make_data is not None:
            data = make_data(sample)
        else:
            assert targets is not None
            data = {
                name: dict.fromkeys(sockets, sample.user_input) for name, sockets in targets.items()
            }
        if callable(run_async):
            outputs = await run_async(data, include_outputs_from=include)
        else:  # Haystack releases without run_async: the blocking run, in a worker thread
            run = pipeline.run  # type: ignore[attr-defined]  # on each pipeline class, not the base
            outputs = await in_thread(run, data, include_outputs_from=include)
        return read_pipeline_output(outputs, response_from, documents_from)

    return ask


async def aevaluate_pipeline(
    pipeline: Any,
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    *,
    query_inputs: Mapping[str, str | Sequence[str]] | None = None,
    make_data: Callable[[SingleTurnSample], dict[str, Any]] | None = None,
    response_from: str | None = None,
    documents_from: str | None = None,
    **options: Any,
) -> EvaluationResult:
    """Run `pipeline` on every row's `user_input`, then score its answers with `metrics`.

    query_inputs: {component: socket or [sockets]} receiving the question (default: every
        pipeline input named query, question or user_input); make_data: build `Pipeline.run`'s
        whole `data` from the sample instead.
    response_from / documents_from: 'component.socket' of the answer (replies, answers or text)
        and of the retrieved Documents (default: the one component returning replies/answers,
        and the one returning documents; none means no contexts).
    options: those of `aevaluate_app` (`llm`, `embeddings`, `app_concurrency`, `app_timeout`,
        `show_progress`, the engine's `max_concurrency`, `timeout`, `budget`, ...).
    """
    ask = pipeline_asker(
        pipeline,
        query_inputs=query_inputs,
        make_data=make_data,
        response_from=response_from,
        documents_from=documents_from,
    )
    options.setdefault("app_name", "pipeline")
    return await aevaluate_app(ask, dataset, metrics, **options)


def evaluate_pipeline(
    pipeline: Any, dataset: Any, metrics: Any = None, **options: Any
) -> EvaluationResult:
    """Synchronous twin of `aevaluate_pipeline` (same parameters)."""
    return run_sync(aevaluate_pipeline(pipeline, dataset, metrics, **options))


# -- scoring inside a pipeline ---------------------------------------------------------------
@component
class RagasEvaluator:
    """A Haystack component scoring `ragas_metrics` on its inputs with assay's engine.

    Outputs `result`: {metric name: score, or None where the cell did not score} and `outcomes`:
    {metric name: the typed outcome (`Ok`, `Skipped` with its reason, `Error` with its cause)}."""

    def __init__(
        self,
        ragas_metrics: Sequence[Metric | str],
        evaluator_llm: Any = None,
        evaluator_embedding: Any = None,
        timeout: float | None = 600.0,
    ) -> None:
        from assay.engine.models import coerce_embeddings, coerce_llm
        from assay.engine.plan import coerce_metrics

        self.metrics = coerce_metrics(list(ragas_metrics))
        if any(metric.sample_kind != "single_turn" for metric in self.metrics):
            raise UsageError("RagasEvaluator scores single-turn metrics")
        self.llm = coerce_llm(evaluator_llm, "evaluator_llm=")
        self.embeddings = coerce_embeddings(evaluator_embedding, "evaluator_embedding=")
        self.timeout = timeout

    @staticmethod
    def _row(
        query: str | None,
        response: str | list[ChatMessage] | None,
        documents: list[Document | str] | None,
        reference_contexts: list[str] | None,
        multi_responses: list[str] | None,
        reference: str | None,
        rubrics: dict[str, str] | None,
    ) -> dict[str, Any]:
        row = {
            "user_input": query,
            "response": _text_of_reply(response, "response") if response is not None else None,
            "retrieved_contexts": _texts_of_documents(documents, "documents")
            if documents is not None
            else None,
            "reference_contexts": reference_contexts,
            "multi_responses": multi_responses,
            "reference": reference,
            "rubrics": rubrics,
        }
        return {key: value for key, value in row.items() if value is not None}

    @component.output_types(result=dict, outcomes=dict)
    async def run_async(
        self,
        query: str | None = None,
        response: str | list[ChatMessage] | None = None,
        documents: list[Document | str] | None = None,
        reference_contexts: list[str] | None = None,
        multi_responses: list[str] | None = None,
        reference: str | None = None,
        rubrics: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        from assay.engine.run import aevaluate

        row = self._row(
            query, response, documents, reference_contexts, multi_responses, reference, rubrics
        )
        scored = await aevaluate(
            [row],
            self.metrics,
            llm=self.llm,
            embeddings=self.embeddings,
            timeout=self.timeout,
            show_progress=False,
        )
        assert isinstance(scored, EvaluationResult)
        outcomes = {name: scored.outcome(0, name) for name in scored.metric_names}
        result = {name: scored[name][0] for name in scored.metric_names}
        return {"result": result, "outcomes": outcomes}

    @component.output_types(result=dict, outcomes=dict)
    def run(
        self,
        query: str | None = None,
        response: str | list[ChatMessage] | None = None,
        documents: list[Document | str] | None = None,
        reference_contexts: list[str] | None = None,
        multi_responses: list[str] | None = None,
        reference: str | None = None,
        rubrics: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        return run_sync(
            self.run_async(
                query, response, documents, reference_contexts, multi_responses, reference, rubrics
            )
        )


# -- Haystack models as assay judges --------------------------------------------------------
_FROM_ROLE = {
    "system": ChatMessage.from_system,
    "user": ChatMessage.from_user,
    "assistant": ChatMessage.from_assistant,
}


class HaystackProvider(Provider):
    """A Haystack chat generator (run(messages=...) -> {"replies": [...]}) or text embedder
    (run(text=...) -> {"embedding": [...]}) as an assay provider."""

    name = "haystack"

    def __init__(self, generator: Any = None, *, embedder: Any = None) -> None:
        wrapped = generator if generator is not None else embedder
        model = getattr(wrapped, "model", None) or type(wrapped).__name__
        super().__init__(
            str(model),
            profile=Profile(output_modes=("prompt",), logprobs=False, multiple_completions=False),
        )
        self.generator = generator
        self.embedder = embedder

    def identity(self) -> dict[str, Any]:
        wrapped = self.generator if self.generator is not None else self.embedder
        return {"provider": "haystack", "class": type(wrapped).__name__, "model": self.model}

    @staticmethod
    async def _run(target: Any, **inputs: Any) -> dict[str, Any]:
        run_async = getattr(target, "run_async", None)
        if callable(run_async):
            return await call_translated(lambda: run_async(**inputs))
        return await call_translated(lambda: in_thread(target.run, **inputs))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.generator is None:
            raise TypeError("this Haystack provider wraps an embedder only")
        messages = [_FROM_ROLE[m.role](str(m.content)) for m in request.messages]
        generations, usage = [], Usage()
        for _ in range(request.n):
            output = await self._run(self.generator, messages=messages)
            replies = output.get("replies") or []
            if not replies:
                from assay.errors import MalformedResponse

                raise MalformedResponse("the Haystack generator returned no replies")
            reply = replies[0]
            meta = getattr(reply, "meta", None) or {}
            counts = meta.get("usage") or {}
            text = reply.text if isinstance(reply, ChatMessage) else str(reply)
            generations.append(
                Generation(text=text or "", finish_reason=meta.get("finish_reason") or "stop")
            )
            usage = usage + Usage(
                input_tokens=counts.get("prompt_tokens", 0) or 0,
                output_tokens=counts.get("completion_tokens", 0) or 0,
                requests=1,
            )
        return ModelResponse(generations=generations, usage=usage, model=self.model)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        if self.embedder is None:
            raise TypeError("this Haystack provider wraps a chat generator only")
        vectors = []
        for text in texts:
            output = await self._run(self.embedder, text=text)
            vectors.append(list(output["embedding"]))
        return vectors, 0


def HaystackLLMWrapper(
    haystack_generator: Any, run_config: Any = None, cache: Any = None, **options: Any
) -> LLM:
    """An assay LLM over a Haystack chat generator (`run_config` sets the retry policy; `cache`
    as in llm_factory)."""
    if not callable(getattr(haystack_generator, "run", None)):
        raise UsageError(
            f"HaystackLLMWrapper needs a Haystack chat generator, got {type(haystack_generator).__name__}"
        )
    return LLM(HaystackProvider(haystack_generator), **_wrapper_options(run_config, cache, options))


def HaystackEmbeddingsWrapper(
    embedder: Any, run_config: Any = None, cache: Any = None, **options: Any
) -> Embeddings:
    """assay Embeddings over a Haystack text embedder (`run_config`, `cache` as for the LLM)."""
    if not callable(getattr(embedder, "run", None)):
        raise UsageError(
            f"HaystackEmbeddingsWrapper needs a Haystack text embedder, got {type(embedder).__name__}"
        )
    return Embeddings(
        HaystackProvider(embedder=embedder), **_wrapper_options(run_config, cache, options)
    )


__all__ = [
    "HaystackEmbeddingsWrapper",
    "HaystackLLMWrapper",
    "HaystackProvider",
    "RagasEvaluator",
    "aevaluate_pipeline",
    "evaluate_pipeline",
    "pipeline_asker",
    "read_pipeline_output",
]
