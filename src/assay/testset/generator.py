"""`TestsetGenerator`: documents in, a gated, exactly-sized, provenanced test set out.

    generator = TestsetGenerator(llm=llm_factory("openai/gpt-4o-mini"), embedding_model=emb)
    testset = generator.generate_with_documents(["# Title\\n...", ...], testset_size=20)
    testset.save("testset.jsonl")

Entry points: `generate_with_documents` (strings, `(text, metadata)` pairs or any objects with
`page_content`/`text`), `generate_with_langchain_docs`, `generate_with_llamaindex_docs`,
`generate_with_chunks` (pre-chunked input, kept as chunks), and `generate` on the graph the
generator holds. Input that is empty (no document with text) is a `UsageError`; blank documents
are skipped and exact duplicates dropped, both noted in the report.

Differences from Ragas, on purpose: the knowledge graph is built without LLM calls unless
`use_llm_extractors=True`; `raise_exceptions` defaults to False (a failed candidate is recorded
and replaced, never the end of the run); `return_executor` is not offered; cost is always
metered (`Testset.total_cost()`), no token-usage parser needed.
"""

from __future__ import annotations

import collections
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util.sync import run_sync
from assay.errors import UsageError
from assay.models.usage import UsageMeter, metering
from assay.schema.usage import Usage
from assay.testset.asking import testset_prompt
from assay.testset.checkpoint import Checkpoint
from assay.testset.gate import QualityGate
from assay.testset.graph import KnowledgeGraph, Node, NodeType
from assay.testset.loaders import documents_to_nodes
from assay.testset.persona import FALLBACK_PERSONA, Persona, agenerate_personas
from assay.testset.run import generate_samples
from assay.testset.synthesizers import default_query_distribution
from assay.testset.synthesizers.base import QueryLength, QueryStyle, content
from assay.testset.testset import GenerationReport, Testset
from assay.testset.transforms.base import aapply_transforms
from assay.testset.transforms.default import default_transforms, default_transforms_for_prechunked


def _styles(values: Sequence[Any] | None) -> tuple[QueryStyle, ...] | None:
    if values is None:
        return None
    out = []
    for value in values:
        if isinstance(value, QueryStyle):
            out.append(value)
            continue
        text = str(value).strip()
        matches = [s for s in QueryStyle if text.lower() in (s.name.lower(), s.value.lower())]
        if not matches:
            choices = ", ".join(s.name.lower() for s in QueryStyle)
            raise UsageError(f"query_styles: unknown style {value!r}; choose from {choices}")
        out.append(matches[0])
    return tuple(out)


@dataclass
class TestsetGenerator:
    __test__ = False

    llm: Any = None
    embedding_model: Any = None
    knowledge_graph: KnowledgeGraph = field(default_factory=KnowledgeGraph)
    persona_list: list[Persona] | None = None
    llm_context: str | None = None
    critic_llm: Any = None  # the gate's judge (default: llm)
    gate: QualityGate | None = None
    _kg_usage: Usage = field(default_factory=Usage, repr=False, init=False)
    _notes: list[str] = field(default_factory=list, repr=False, init=False)
    _transform_failures: list[dict[str, Any]] = field(default_factory=list, repr=False, init=False)
    _kg_seconds: float = field(default=0.0, repr=False, init=False)

    def __post_init__(self) -> None:
        from assay.engine.models import coerce_embeddings, coerce_llm

        self.llm = coerce_llm(self.llm)
        self.critic_llm = coerce_llm(self.critic_llm, "critic_llm=")
        if self.embedding_model is not None and not hasattr(self.embedding_model, "aembed_texts"):
            self.embedding_model = coerce_embeddings(self.embedding_model, "embedding_model=")

    @classmethod
    def from_langchain(
        cls,
        llm: Any,
        embedding_model: Any,
        knowledge_graph: KnowledgeGraph | None = None,
        llm_context: str | None = None,
    ) -> TestsetGenerator:
        return cls(
            llm=llm,
            embedding_model=embedding_model,
            knowledge_graph=knowledge_graph or KnowledgeGraph(),
            llm_context=llm_context,
        )

    from_llama_index = from_langchain

    # -- building the graph ------------------------------------------------------------------
    async def abuild_graph(
        self,
        nodes: list[Node],
        transforms: Any,
        *,
        checkpoint_dir: str | Path | None = None,
        on_progress: Any = None,
    ) -> KnowledgeGraph:
        names = [getattr(t, "name", type(t).__name__) for t in transforms]
        made_from = hashlib.sha256(
            "\x1f".join([*(str(n.id) for n in nodes), *names]).encode("utf-8")
        ).hexdigest()[:16]
        checkpoint = Checkpoint(checkpoint_dir) if checkpoint_dir else None
        saved = checkpoint.load_graph(made_from) if checkpoint else None
        if saved is not None:
            self._notes.append("knowledge graph loaded from the checkpoint (no transform re-run)")
            self.knowledge_graph = saved
            return saved
        kg = KnowledgeGraph(nodes=nodes)
        meter, started = UsageMeter(), time.monotonic()
        with metering(meter):
            report = await aapply_transforms(kg, transforms, on_progress=on_progress)
        self._kg_usage = self._kg_usage + meter.usage
        self._kg_seconds += time.monotonic() - started
        self._transform_failures += [
            {"stage": "transforms", **f.to_dict()} for f in report.failures
        ]
        if checkpoint:
            checkpoint.save_graph(kg, made_from)
        self.knowledge_graph = kg
        return kg

    async def agenerate_with_documents(
        self,
        documents: Sequence[Any],
        testset_size: int,
        transforms: Any = None,
        transforms_llm: Any = None,
        transforms_embedding_model: Any = None,
        query_distribution: Any = None,
        *,
        use_llm_extractors: bool = False,
        checkpoint_dir: str | Path | None = None,
        on_progress: Any = None,
        prechunked: bool = False,
        **options: Any,
    ) -> Testset:
        self._check_size(testset_size)
        if self.llm is None and transforms_llm is None:
            raise UsageError(
                "An llm was not provided: pass TestsetGenerator(llm=llm_factory(...)); it writes "
                "the questions (the knowledge graph itself needs none unless use_llm_extractors=True)"
            )
        self._notes, self._transform_failures = [], []
        self._kg_usage, self._kg_seconds = Usage(), 0.0
        nodes = documents_to_nodes(
            documents, NodeType.CHUNK if prechunked else NodeType.DOCUMENT, self._notes
        )
        llm = transforms_llm or self.llm
        embeddings = transforms_embedding_model or self.embedding_model
        if transforms is None:
            transforms = (
                default_transforms_for_prechunked(llm, embeddings, use_llm=use_llm_extractors)
                if prechunked
                else default_transforms(nodes, llm, embeddings, use_llm=use_llm_extractors)
            )
        await self.abuild_graph(
            nodes, transforms, checkpoint_dir=checkpoint_dir, on_progress=on_progress
        )
        return await self.agenerate(
            testset_size,
            query_distribution,
            checkpoint_dir=checkpoint_dir,
            on_progress=on_progress,
            **options,
        )

    def generate_with_documents(
        self, documents: Sequence[Any], testset_size: int, **options: Any
    ) -> Testset:
        return run_sync(self.agenerate_with_documents(documents, testset_size, **options))

    def generate_with_langchain_docs(
        self, documents: Sequence[Any], testset_size: int, **options: Any
    ) -> Testset:
        if options.pop("return_executor", False):
            self._no_executor()
        return self.generate_with_documents(documents, testset_size, **options)

    def generate_with_llamaindex_docs(
        self, documents: Sequence[Any], testset_size: int, **options: Any
    ) -> Testset:
        return self.generate_with_documents(documents, testset_size, **options)

    generate_with_llama_index_docs = generate_with_llamaindex_docs

    def generate_with_chunks(
        self, chunks: Sequence[Any], testset_size: int, **options: Any
    ) -> Testset:
        if options.pop("return_executor", False):
            self._no_executor()
        return self.generate_with_documents(chunks, testset_size, prechunked=True, **options)

    # -- generating samples ------------------------------------------------------------------
    async def agenerate(
        self,
        testset_size: int,
        query_distribution: Any = None,
        num_personas: int = 3,
        run_config: Any = None,
        batch_size: int | None = None,
        callbacks: Any = None,
        token_usage_parser: Any = None,
        with_debugging_logs: bool = False,
        raise_exceptions: bool = False,
        return_executor: bool = False,
        *,
        seed: int = 42,
        query_styles: Sequence[Any] | None = None,
        query_lengths: Sequence[Any] | None = None,
        max_candidates: int | None = None,
        checkpoint_dir: str | Path | None = None,
        on_progress: Any = None,
        max_workers: int | None = None,
    ) -> Testset:
        if return_executor:
            self._no_executor()
        self._check_size(testset_size)
        if self.llm is None:
            raise UsageError(
                "TestsetGenerator needs an llm to write questions: TestsetGenerator(llm=llm_factory(...))"
            )
        kg = self.knowledge_graph
        if not any(content(n).strip() for n in kg.nodes):
            raise UsageError(
                "the knowledge graph holds no text: add documents (generate_with_documents) first"
            )
        budget = max_candidates if max_candidates is not None else 3 * testset_size + 10
        if budget < 1:
            raise UsageError(f"max_candidates must be at least 1, got {budget}")
        workers = max_workers or getattr(run_config, "max_workers", None) or 8
        workers = workers if workers > 0 else 64  # RunConfig's -1: no fixed limit
        report = GenerationReport(requested=testset_size, notes=list(self._notes))
        report.failures += self._transform_failures
        languages = collections.Counter(
            n.get_property("language") or "english" for n in kg.nodes if n.type == NodeType.CHUNK
        )
        report.language = languages.most_common(1)[0][0] if languages else "english"
        checkpoint = Checkpoint(checkpoint_dir) if checkpoint_dir else None
        personas, persona_usage, persona_seconds = await self._personas(
            kg, num_personas, report, checkpoint, on_progress
        )
        distribution = list(
            query_distribution or default_query_distribution(self.llm, None, self.llm_context)
        )
        styles, lengths = (
            _styles(query_styles),
            query_lengths and tuple(QueryLength(x) for x in query_lengths),
        )
        for synthesizer, _ in distribution:
            synthesizer.llm = synthesizer.llm or self.llm
            synthesizer.llm_context = synthesizer.llm_context or self.llm_context
            if styles:
                synthesizer.query_styles = styles
            if lengths:
                synthesizer.query_lengths = lengths
        gate = self.gate or QualityGate(llm=self.critic_llm or self.llm)
        if checkpoint:
            checkpoint.open_run(
                {
                    "size": testset_size,
                    "seed": seed,
                    "graph": kg.fingerprint(),
                    "budget": budget,
                    "distribution": [[s.name, w] for s, w in distribution],
                    "styles": [s.value for s in styles or ()],
                    "personas": [p.name for p in personas],
                    # answers made by another model are not this run's answers
                    "writers": [
                        json.loads(name)
                        for name in sorted(
                            {json.dumps(_model_name(s.llm)) for s, _ in distribution}
                        )
                    ],
                    "critic": _model_name(gate.llm),
                    # drafts written from a reworded prompt are not this run's drafts
                    "prompts": {s.name: _prompt_hash(s) for s, _ in distribution},
                }
            )
        meter, started = UsageMeter(), time.monotonic()
        with metering(meter):
            samples = await generate_samples(
                kg,
                distribution,
                personas,
                testset_size,
                gate,
                report,
                seed=seed,
                budget=budget,
                max_workers=workers,
                checkpoint=checkpoint,
                on_progress=on_progress,
                raise_exceptions=raise_exceptions,
            )
        documents = {str(kg.document_of(n).id) for n in kg.nodes if content(n).strip()}
        report.documents = len(documents)
        report.documents_seeded = len(
            {d for s in samples for d in (s.provenance.document_ids if s.provenance else [])}
            & documents
        )
        report.calls = {
            "knowledge_graph": self._kg_usage.requests,
            "personas": persona_usage.requests,
            "samples": meter.usage.requests,
        }
        report.seconds = {
            "knowledge_graph": round(self._kg_seconds, 3),
            "personas": round(persona_seconds, 3),
            "samples": round(time.monotonic() - started, 3),
        }
        usage = self._kg_usage + persona_usage + meter.usage
        return Testset(samples=samples, usage=usage, report=report)

    def generate(
        self,
        testset_size: int,
        query_distribution: Any = None,
        num_personas: int = 3,
        **options: Any,
    ) -> Testset:
        return run_sync(self.agenerate(testset_size, query_distribution, num_personas, **options))

    async def _personas(
        self,
        kg: KnowledgeGraph,
        num_personas: int,
        report: GenerationReport,
        checkpoint: Checkpoint | None,
        on_progress: Any,
    ) -> tuple[list[Persona], Usage, float]:
        """The personas (given, saved by an earlier run, or generated), their usage and seconds."""
        meter, started = UsageMeter(), time.monotonic()
        saved = checkpoint.load_personas() if checkpoint else None
        if self.persona_list:
            personas = list(self.persona_list)
        elif saved:
            personas = [Persona.model_validate(p) for p in saved]
        else:
            if on_progress:
                on_progress("personas", 0, num_personas)
            with metering(meter):
                personas, failures = await agenerate_personas(
                    kg, self.llm, num_personas, language=report.language or "english"
                )
            report.failures += failures
            if on_progress:
                on_progress("personas", num_personas, num_personas)
            if not personas:
                personas = [FALLBACK_PERSONA]
                report.notes.append(
                    "no persona could be generated; a neutral built-in persona was used"
                )
        if checkpoint and not saved:
            checkpoint.save_personas([p.model_dump() for p in personas])
        return personas, meter.usage, time.monotonic() - started

    @staticmethod
    def _check_size(size: Any) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise UsageError(f"testset_size must be a whole number of at least 1, got {size!r}")

    @staticmethod
    def _no_executor() -> None:
        raise UsageError(
            "return_executor is not offered by assay's generator; call generate(...) (it resumes from checkpoint_dir=)"
        )


def _prompt_hash(synthesizer: Any) -> str | None:
    """The content hash of a synthesizer's drafting prompt (None for a custom synthesizer whose
    prompt is not one of the generator's files)."""
    prompt_id = getattr(synthesizer, "prompt_id", None)
    if not prompt_id:
        return None
    try:
        return testset_prompt(prompt_id).hash
    except UsageError:
        return None


def _model_name(model: Any) -> Any:
    """A model as a checkpoint names it: its identity (JSON as it is read back), else its class.
    Not `metrics.base.model_identity`, whose fallback is a repr: that can hold a memory address
    and would change on every run, so every checkpoint would be refused."""
    identity = getattr(model, "identity", None)
    if callable(identity):
        return json.loads(json.dumps(identity(), default=str, sort_keys=True))
    return type(model).__name__


__all__ = ["TestsetGenerator"]
