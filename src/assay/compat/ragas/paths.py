"""Every Ragas module path, and where each name it offers lives in assay.

Ragas users import from paths such as `ragas.llms`, `ragas.dataset_schema` or
`ragas.metrics.collections`. Under assay each of those paths is a module of its own (`assay.llms`,
`assay.dataset_schema`, ...) holding nothing but a call to `reexport`, which fills it from the
table below. So this file is the whole map: to make another Ragas path work, add one entry here
and a two-line module at the matching assay path (`tests/compat/test_ragas_paths.py` checks that
the two agree, and `docs/coming-from-ragas.md` prints the table).

A value is the assay module the name is taken from, or `"module:attribute"` where assay spells
the name differently. Ragas paths that are assay's own modules already (`ragas.metrics`,
`ragas.testset`, the agent-trace converters under `ragas.integrations`) are listed in `NATIVE`:
they need no thin module, only the names.

Integrations assay does not provide are in `NOT_PROVIDED`: importing their path raises an
`ImportError` that says so in one line (`refuse`).
"""

from __future__ import annotations

import importlib
from typing import Any

_R = "assay.compat.ragas"  # Ragas-shaped code that has no other home in assay

_SAMPLES = {
    "BaseSample": "assay.schema.samples",
    "SingleTurnSample": "assay.schema.samples",
    "MultiTurnSample": "assay.schema.samples",
    "EvaluationDataset": "assay.schema.dataset",
    "EvaluationResult": "assay.schema.result",
    "RagasDataset": "assay.schema.dataset:EvaluationDataset",
    "PromptAnnotation": "assay.alignment.annotations",
    "SampleAnnotation": "assay.alignment.annotations",
    "SingleMetricAnnotation": "assay.alignment.annotations",
    "MetricAnnotation": "assay.alignment.annotations",
}

_MESSAGES = {
    "Message": "assay.schema.messages",
    "HumanMessage": "assay.schema.messages",
    "AIMessage": "assay.schema.messages",
    "ToolMessage": "assay.schema.messages",
    "ToolCall": "assay.schema.messages",
}

_LLMS = {
    "llm_factory": "assay.models.factory",
    "BaseRagasLLM": f"{_R}.models",
    "InstructorBaseRagasLLM": f"{_R}.models",
    "InstructorLLM": f"{_R}.models",
    "InstructorModelArgs": f"{_R}.models",
    "LiteLLMStructuredLLM": f"{_R}.models",
    "LangchainLLMWrapper": "assay.models.providers.langchain",
    "LlamaIndexLLMWrapper": "assay.models.providers.llamaindex",
    "oci_genai_factory": f"{_R}.internals",
}

_EMBEDDINGS = {
    "embedding_factory": "assay.models.factory",
    "BaseRagasEmbedding": f"{_R}.models",
    "BaseRagasEmbeddings": f"{_R}.models",
    "OpenAIEmbeddings": f"{_R}.models",
    "GoogleEmbeddings": f"{_R}.models",
    "HuggingFaceEmbeddings": f"{_R}.models",
    "HuggingfaceEmbeddings": f"{_R}.models",
    "LiteLLMEmbeddings": f"{_R}.models",
    "LangchainEmbeddingsWrapper": "assay.models.providers.langchain",
    "LlamaIndexEmbeddingsWrapper": "assay.models.providers.llamaindex",
}

# ragas.metrics.collections: the 0.4 metric API. Where Ragas' collection class has another name
# than its legacy twin, both are the one assay metric.
_COLLECTIONS = {
    "AnswerAccuracy": "assay.metrics.rag.dual_judge",
    "AnswerCorrectness": "assay.metrics.answer.answer_correctness",
    "AnswerRelevancy": "assay.metrics.rag.answer_relevancy",
    "ResponseRelevancy": "assay.metrics.rag.answer_relevancy",
    "AgentGoalAccuracyWithReference": "assay.metrics.agent.goal_accuracy",
    "AgentGoalAccuracyWithoutReference": "assay.metrics.agent.goal_accuracy",
    "BleuScore": "assay.metrics.classic.bleu",
    "CHRFScore": "assay.metrics.classic.chrf",
    "ChrfScore": "assay.metrics.classic.chrf",
    "ContextEntityRecall": "assay.metrics.rag.context_entity_recall",
    "ContextPrecision": "assay.metrics.rag.context_precision",
    "ContextUtilization": "assay.metrics.rag.context_precision",
    "ContextRecall": "assay.metrics.rag.context_recall",
    "ContextRelevance": "assay.metrics.rag.dual_judge",
    "DataCompyScore": "assay.metrics.classic.datacompy_score",
    "DistanceMeasure": "assay.metrics.classic.string_similarity",
    "DomainSpecificRubrics": "assay.metrics.general.rubrics",
    "ExactMatch": "assay.metrics.classic.exact_match",
    "FactualCorrectness": "assay.metrics.rag.factual_correctness",
    "Faithfulness": "assay.metrics.rag.faithfulness",
    "InstanceSpecificRubrics": "assay.metrics.general.rubrics",
    "MultiModalFaithfulness": "assay.metrics.rag.multimodal",
    "MultiModalRelevance": "assay.metrics.rag.multimodal",
    "NoiseSensitivity": "assay.metrics.rag.noise_sensitivity",
    "NonLLMStringSimilarity": "assay.metrics.classic.string_similarity",
    "ResponseGroundedness": "assay.metrics.rag.dual_judge",
    "RougeScore": "assay.metrics.classic.rouge",
    "RubricsScoreWithReference": "assay.metrics.general.rubrics",
    "RubricsScoreWithoutReference": "assay.metrics.general.rubrics",
    "SemanticSimilarity": "assay.metrics.answer.semantic_similarity",
    "SQLSemanticEquivalence": "assay.metrics.sql.sql_equivalence",
    "StringPresence": "assay.metrics.classic.exact_match",
    "SummaryScore": "assay.metrics.answer.summary_score",
    "ToolCallAccuracy": "assay.metrics.classic.tool_call_accuracy",
    "ToolCallF1": "assay.metrics.classic.tool_call_f1",
    "TopicAdherence": "assay.metrics.agent.topic_adherence",
}

_FAITHFULNESS_PROMPTS = {
    name: f"{_R}.prompt_classes"
    for name in (
        "StatementGeneratorInput",
        "StatementGeneratorOutput",
        "StatementGeneratorPrompt",
        "NLIStatementInput",
        "NLIStatementOutput",
        "NLIStatementPrompt",
        "StatementFaithfulnessAnswer",
        "FaithfulnessInput",
        "FaithfulnessOutput",
        "FaithfulnessPrompt",
    )
}
_FACTUAL_PROMPTS = {
    name: f"{_R}.prompt_classes"
    for name in (
        "ClaimDecompositionInput",
        "ClaimDecompositionOutput",
        "ClaimDecompositionPrompt",
        "NLIStatementInput",
        "NLIStatementOutput",
        "NLIStatementPrompt",
        "StatementFaithfulnessAnswer",
    )
}

_METRIC_BASES = {
    "Metric": "assay.metrics.base",
    "BaseMetric": f"{_R}.metric_bases",
    "SimpleBaseMetric": f"{_R}.metric_bases",
    "SimpleLLMMetric": f"{_R}.metric_bases",
    "MetricWithLLM": f"{_R}.metric_bases",
    "MetricWithEmbeddings": f"{_R}.metric_bases",
    "SingleTurnMetric": f"{_R}.metric_bases",
    "MultiTurnMetric": f"{_R}.metric_bases",
    "MetricType": f"{_R}.metric_bases",
    "MetricOutputType": f"{_R}.metric_bases",
    "MetricResult": "assay.schema.outcome",
    "Ensember": f"{_R}.metric_bases",
    "create_auto_response_model": f"{_R}.metric_bases",
}

_PROMPT = {
    "BasePrompt": f"{_R}.prompts",
    "StringPrompt": f"{_R}.prompts",
    "PydanticPrompt": f"{_R}.prompts",
    "DynamicFewShotPrompt": f"{_R}.prompts",
    "PromptMixin": f"{_R}.prompts",
    "StringIO": f"{_R}.prompts",
    "BoolIO": f"{_R}.prompts",
    "RagasOutputParserException": f"{_R}.prompts",
    "Prompt": f"{_R}.simple_prompts:SimplePrompt",
    "string_prompt": f"{_R}.simple_prompts",
}

_TESTSET_TRANSFORMS = "assay.testset.transforms"

# Ragas module path -> {name: where it lives}. Each has a thin module at the assay path.
RAGAS_PATHS: dict[str, dict[str, str]] = {
    "ragas.dataset_schema": _SAMPLES,
    "ragas.messages": _MESSAGES,
    "ragas.evaluation": {
        "evaluate": "assay.engine",
        "aevaluate": "assay.engine",
        "EvaluationResult": "assay.schema.result",
        "RAGAS_EVALUATION_CHAIN_NAME": "assay.metrics.callbacks",
    },
    "ragas.executor": {
        "Executor": "assay.engine.executor",
        "ExceptionInRunner": "assay.engine.executor",
    },
    "ragas.run_config": {"RunConfig": "assay.engine.run_config"},
    "ragas.exceptions": {
        "ExceptionInRunner": "assay.engine.executor",
        "LLMDidNotFinishException": f"{_R}.models",
        "RagasOutputParserException": f"{_R}.prompts",
    },
    "ragas.llms": _LLMS,
    "ragas.llms.base": _LLMS,
    "ragas.llms.adapters": {
        "auto_detect_adapter": f"{_R}.internals",
        "get_adapter": f"{_R}.internals",
    },
    "ragas.llms.litellm_llm": {"LiteLLMStructuredLLM": f"{_R}.models"},
    "ragas.embeddings": _EMBEDDINGS,
    "ragas.embeddings.base": _EMBEDDINGS,
    "ragas.embeddings.openai_provider": {"OpenAIEmbeddings": f"{_R}.models"},
    "ragas.embeddings.google_provider": {"GoogleEmbeddings": f"{_R}.models"},
    "ragas.embeddings.huggingface_provider": {"HuggingFaceEmbeddings": f"{_R}.models"},
    "ragas.embeddings.litellm_provider": {"LiteLLMEmbeddings": f"{_R}.models"},
    "ragas.cache": {
        "CacheInterface": f"{_R}.cache",
        "DiskCacheBackend": f"{_R}.cache",
        "cacher": f"{_R}.cache",
    },
    "ragas.cost": {
        "TokenUsage": f"{_R}.cost",
        "TokenUsageParser": f"{_R}.cost",
        "CostCallbackHandler": f"{_R}.cost",
        "get_token_usage_for_openai": f"{_R}.cost",
        "get_token_usage_for_anthropic": f"{_R}.cost",
    },
    "ragas.tokenizers": {
        "BaseTokenizer": f"{_R}.tokenizers",
        "TiktokenWrapper": f"{_R}.tokenizers",
        "HuggingFaceTokenizer": f"{_R}.tokenizers",
        "get_tokenizer": f"{_R}.tokenizers",
        "get_default_tokenizer": f"{_R}.tokenizers",
    },
    "ragas.utils": {
        "set_logging_level": "assay.engine.logs",
        "patch_logger": f"{_R}.internals",
        "camel_to_snake": f"{_R}.prompts",
    },
    "ragas.async_utils": {"run": f"{_R}.internals:run_coroutine"},
    "ragas._analytics": {"_analytics_batcher": f"{_R}.internals:analytics_batcher"},
    "ragas.prompt": _PROMPT,
    "ragas.prompt.base": {"BasePrompt": f"{_R}.prompts", "StringPrompt": f"{_R}.prompts"},
    "ragas.prompt.pydantic_prompt": {
        "PydanticPrompt": f"{_R}.prompts",
        "RagasOutputParserException": f"{_R}.prompts",
    },
    "ragas.prompt.mixin": {"PromptMixin": f"{_R}.prompts"},
    "ragas.prompt.dynamic_few_shot": {"DynamicFewShotPrompt": f"{_R}.prompts"},
    "ragas.prompt.simple_prompt": {"Prompt": f"{_R}.simple_prompts:SimplePrompt"},
    "ragas.dataset": {"Dataset": "assay.experiments.dataset"},
    "ragas.config": {
        "InstructionConfig": "assay.alignment.config",
        "DemonstrationConfig": "assay.alignment.config",
    },
    "ragas.losses": {
        "Loss": "assay.alignment.losses",
        "MSELoss": "assay.alignment.losses",
        "HuberLoss": "assay.alignment.losses",
        "BinaryMetricLoss": "assay.alignment.losses",
    },
    "ragas.optimizers": {
        "Optimizer": "assay.alignment.optimizers",
        "DSPyOptimizer": "assay.alignment.optimizers",
        "GeneticOptimizer": "assay.alignment.optimizers",
    },
    "ragas.optimizers.dspy_adapter": {
        name: f"{_R}.internals"
        for name in (
            "create_dspy_metric",
            "pydantic_prompt_to_dspy_signature",
            "ragas_dataset_to_dspy_examples",
            "setup_dspy_llm",
        )
    },
    # metrics
    "ragas.metrics.result": {"MetricResult": "assay.schema.outcome"},
    "ragas.metrics.discrete": {
        "DiscreteMetric": "assay.metrics.custom.llm_metrics",
        "discrete_metric": "assay.metrics.custom.decorators",
    },
    "ragas.metrics.numeric": {
        "NumericMetric": "assay.metrics.custom.llm_metrics",
        "numeric_metric": "assay.metrics.custom.decorators",
    },
    "ragas.metrics.ranking": {
        "RankingMetric": "assay.metrics.custom.llm_metrics",
        "ranking_metric": "assay.metrics.custom.decorators",
    },
    "ragas.metrics.collections": _COLLECTIONS,
    "ragas.metrics.collections.faithfulness": {"Faithfulness": "assay.metrics.rag.faithfulness"},
    "ragas.metrics.collections.faithfulness.util": _FAITHFULNESS_PROMPTS,
    "ragas.metrics.collections.factual_correctness": {
        "FactualCorrectness": "assay.metrics.rag.factual_correctness"
    },
    "ragas.metrics.collections.factual_correctness.util": _FACTUAL_PROMPTS,
    "ragas.metrics._answer_relevance": {
        "AnswerRelevancy": "assay.metrics.rag.answer_relevancy",
        "ResponseRelevancy": "assay.metrics.rag.answer_relevancy",
        "answer_relevancy": "assay.metrics.singletons",
    },
    "ragas.metrics._aspect_critic": {
        "AspectCritic": "assay.metrics.general.aspect_critic",
        "AspectCriticWithReference": "assay.metrics.general.aspect_critic",
    },
    "ragas.metrics._context_precision": {
        "ContextPrecision": "assay.metrics.rag.context_precision",
        "ContextUtilization": "assay.metrics.rag.context_precision",
        "LLMContextPrecisionWithReference": "assay.metrics.rag.context_precision",
        "LLMContextPrecisionWithoutReference": "assay.metrics.rag.context_precision",
        "NonLLMContextPrecisionWithReference": "assay.metrics.classic.non_llm_context",
        "IDBasedContextPrecision": "assay.metrics.classic.id_context",
        "context_precision": "assay.metrics.singletons",
    },
    "ragas.metrics._context_recall": {
        "ContextRecall": "assay.metrics.rag.context_recall",
        "LLMContextRecall": "assay.metrics.rag.context_recall",
        "NonLLMContextRecall": "assay.metrics.classic.non_llm_context",
        "IDBasedContextRecall": "assay.metrics.classic.id_context",
        "context_recall": "assay.metrics.singletons",
    },
    "ragas.metrics._domain_specific_rubrics": {
        "RubricsScore": "assay.metrics.general.rubrics",
        "RubricsScoreWithReference": "assay.metrics.general.rubrics",
        "RubricsScoreWithoutReference": "assay.metrics.general.rubrics",
        "rubrics_score_with_reference": "assay.metrics.singletons",
        "rubrics_score_without_reference": "assay.metrics.singletons",
    },
    "ragas.metrics._factual_correctness": {
        "FactualCorrectness": "assay.metrics.rag.factual_correctness"
    },
    "ragas.metrics._faithfulness": {
        "Faithfulness": "assay.metrics.rag.faithfulness",
        "FaithfulnesswithHHEM": "assay.metrics.faithfulness_hhem",
        "faithfulness": "assay.metrics.singletons",
    },
    "ragas.metrics._string": {
        "NonLLMStringSimilarity": "assay.metrics.classic.string_similarity",
        "DistanceMeasure": "assay.metrics.classic.string_similarity",
        "ExactMatch": "assay.metrics.classic.exact_match",
        "StringPresence": "assay.metrics.classic.exact_match",
    },
    "ragas.metrics._tool_call_accuracy": {
        "ToolCallAccuracy": "assay.metrics.classic.tool_call_accuracy"
    },
    # test sets
    "ragas.testset.evolutions": {
        "simple": f"{_R}.evolutions",
        "reasoning": f"{_R}.evolutions",
        "multi_context": f"{_R}.evolutions",
        "conditional": f"{_R}.evolutions",
    },
    "ragas.testset.synthesizers.generate": {"TestsetGenerator": "assay.testset.generator"},
    "ragas.testset.synthesizers.testset_schema": {
        "Testset": "assay.testset.testset",
        "TestsetSample": "assay.testset.testset",
    },
    "ragas.testset.synthesizers.base_query": {
        "QuerySynthesizer": "assay.testset.synthesizers.base"
    },
    "ragas.testset.synthesizers.prompts": {
        "ThemesPersonasInput": "assay.testset.persona",
        "ThemesPersonasMatchingPrompt": "assay.testset.persona",
    },
    "ragas.testset.synthesizers.single_hop.specific": {
        "SingleHopSpecificQuerySynthesizer": "assay.testset.synthesizers.single_hop"
    },
    "ragas.testset.synthesizers.multi_hop.base": {
        "MultiHopQuerySynthesizer": "assay.testset.synthesizers.multi_hop",
        "MultiHopScenario": "assay.testset.synthesizers.base",
    },
    "ragas.testset.synthesizers.multi_hop.abstract": {
        "MultiHopAbstractQuerySynthesizer": "assay.testset.synthesizers.multi_hop"
    },
    "ragas.testset.synthesizers.multi_hop.specific": {
        "MultiHopSpecificQuerySynthesizer": "assay.testset.synthesizers.multi_hop"
    },
    "ragas.testset.transforms.engine": {
        "Parallel": _TESTSET_TRANSFORMS,
        "apply_transforms": _TESTSET_TRANSFORMS,
        "rollback_transforms": _TESTSET_TRANSFORMS,
    },
    "ragas.testset.transforms.extractors": {
        name: _TESTSET_TRANSFORMS
        for name in (
            "EmbeddingExtractor",
            "HeadlinesExtractor",
            "KeyphrasesExtractor",
            "NERExtractor",
            "SummaryExtractor",
            "ThemesExtractor",
            "TitleExtractor",
        )
    },
    "ragas.testset.transforms.extractors.llm_based": {
        name: _TESTSET_TRANSFORMS
        for name in (
            "HeadlinesExtractor",
            "KeyphrasesExtractor",
            "NERExtractor",
            "SummaryExtractor",
            "ThemesExtractor",
            "TitleExtractor",
        )
    },
    "ragas.testset.transforms.extractors.embeddings": {"EmbeddingExtractor": _TESTSET_TRANSFORMS},
    "ragas.testset.transforms.splitters": {"HeadlineSplitter": _TESTSET_TRANSFORMS},
    "ragas.testset.transforms.filters": {"CustomNodeFilter": _TESTSET_TRANSFORMS},
    "ragas.testset.transforms.relationship_builders": {
        name: _TESTSET_TRANSFORMS
        for name in (
            "CosineSimilarityBuilder",
            "SummaryCosineSimilarityBuilder",
            "JaccardSimilarityBuilder",
            "OverlapScoreBuilder",
        )
    },
    "ragas.testset.transforms.relationship_builders.cosine": {
        "CosineSimilarityBuilder": _TESTSET_TRANSFORMS,
        "SummaryCosineSimilarityBuilder": _TESTSET_TRANSFORMS,
    },
    "ragas.testset.transforms.relationship_builders.traditional": {
        "JaccardSimilarityBuilder": _TESTSET_TRANSFORMS,
        "OverlapScoreBuilder": _TESTSET_TRANSFORMS,
    },
    # old (0.1) paths the integration guides still use
    "ragas.langchain": {"RagasEvaluatorChain": "assay.integrations.langchain"},
    "ragas.langchain.evalchain": {"RagasEvaluatorChain": "assay.integrations.langchain"},
    "ragas.llama_index": {"evaluate": "assay.integrations.llama_index"},
    "ragas.integrations.opik": {"OpikTracer": f"{_R}.internals"},
}

# Ragas-only names added to assay modules whose path Ragas shares (by `assay.compat.ragas.install`,
# when assay is imported), so that those modules themselves never import this package.
_RAGAS_METRIC_BASES = {
    name: location for name, location in _METRIC_BASES.items() if location.startswith(_R)
} | {
    name: f"{_R}.metric_bases"
    for name in ("DiscreteMetricProtocol", "NumericMetricProtocol", "RankingMetricProtocol")
}
SHARED_MODULE_NAMES: dict[str, dict[str, str]] = {
    "assay": _RAGAS_METRIC_BASES,
    "assay.metrics": _RAGAS_METRIC_BASES,
    "assay.metrics.base": _RAGAS_METRIC_BASES,
}

# Ragas paths that are assay modules already, with the Ragas names the docs import from them.
NATIVE: dict[str, tuple[str, ...]] = {
    "ragas": (
        "evaluate",
        "aevaluate",
        "EvaluationDataset",
        "SingleTurnSample",
        "MultiTurnSample",
        "Dataset",
        "experiment",
        "RunConfig",
        "DiskCacheBackend",
        "CacheInterface",
        "cacher",
        "llm_factory",
        "embedding_factory",
        "TiktokenWrapper",
        "HuggingFaceTokenizer",
        "get_tokenizer",
    ),
    "ragas.metrics": (
        "Faithfulness",
        "LLMContextRecall",
        "FactualCorrectness",
        "AspectCritic",
        "DiscreteMetric",
        "NumericMetric",
        "RankingMetric",
        "MetricResult",
        "MetricWithLLM",
        "SingleTurnMetric",
        "MultiTurnMetric",
        "MetricType",
        "discrete_metric",
        "numeric_metric",
        "ranking_metric",
        "faithfulness",
    ),
    "ragas.metrics.base": ("Metric", "MetricWithLLM", "SingleTurnMetric", "MetricType"),
    "ragas.testset": ("TestsetGenerator", "Testset", "TestsetSample"),
    "ragas.testset.synthesizers.base": ("BaseSynthesizer", "BaseScenario", "QueryLength"),
    "ragas.testset.transforms.base": ("BaseGraphTransformation", "Extractor", "Splitter"),
    "ragas.testset.transforms.default": ("default_transforms", "default_transforms_for_prechunked"),
    "ragas.testset.generator": ("TestsetGenerator",),
    "ragas.testset.synthesizers.single_hop": ("SingleHopQuerySynthesizer",),
    "ragas.testset.synthesizers.multi_hop": (
        "MultiHopQuerySynthesizer",
        "MultiHopAbstractQuerySynthesizer",
        "MultiHopSpecificQuerySynthesizer",
    ),
    "ragas.testset.graph": ("KnowledgeGraph", "Node", "NodeType", "Relationship"),
    "ragas.testset.persona": ("Persona", "generate_personas_from_kg"),
    "ragas.testset.synthesizers": (
        "default_query_distribution",
        "SingleHopSpecificQuerySynthesizer",
        "MultiHopAbstractQuerySynthesizer",
        "MultiHopSpecificQuerySynthesizer",
    ),
    "ragas.testset.transforms": ("apply_transforms", "default_transforms", "Parallel"),
    "ragas.integrations.ag_ui": ("convert_to_ragas_messages", "run_ag_ui_row"),
    "ragas.integrations.amazon_bedrock": ("convert_to_ragas_messages",),
    "ragas.integrations.langchain": ("EvaluatorChain",),
    "ragas.integrations.langgraph": ("convert_to_ragas_messages",),
    "ragas.integrations.llama_index": ("evaluate", "convert_to_ragas_messages"),
    "ragas.integrations.swarm": ("convert_to_ragas_messages",),
}

# Integrations Ragas documents that assay does not offer, with the reason given on import.
NOT_PROVIDED: dict[str, str] = {
    "ragas.integrations.r2r": (
        "an R2R retrieval service; evaluate its answers with `evaluate()` on an "
        "EvaluationDataset built from them"
    ),
    "ragas.integrations.helicone": (
        "Helicone's gateway settings; point `llm_factory(..., base_url=...)` at the gateway instead"
    ),
}


def assay_path(ragas_path: str) -> str:
    """`ragas.x.y` -> `assay.x.y`."""
    return "assay" + ragas_path[len("ragas") :]


def ragas_path(assay_module: str) -> str:
    """`assay.x.y` -> `ragas.x.y`."""
    return "ragas" + assay_module[len("assay") :]


def resolve(location: str, name: str) -> Any:
    """The object `location` ("module" or "module:attribute") names for `name`."""
    module, _, attribute = location.partition(":")
    return getattr(importlib.import_module(module), attribute or name)


def reexport(assay_module: str, namespace: dict[str, Any]) -> list[str]:
    """Fill the thin module `assay_module` (its `globals()`) with the names of its Ragas path and
    return them, for its `__all__`."""
    table = RAGAS_PATHS[ragas_path(assay_module)]
    for name, location in table.items():
        namespace[name] = resolve(location, name)
    return sorted(table)


def refuse(assay_module: str) -> None:
    """Raise the one-line ImportError of an integration assay does not provide."""
    path = ragas_path(assay_module)
    raise ImportError(
        f"assay does not provide {path} ({NOT_PROVIDED[path]}); see docs/coming-from-ragas.md",
        name=assay_module,
    )
