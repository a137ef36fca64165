"""Metrics for retrieval-augmented generation, judged by an LLM (and embeddings where noted)."""

from assay.metrics.rag.answer_relevancy import AnswerRelevancy, ResponseRelevancy
from assay.metrics.rag.context_entity_recall import ContextEntityRecall
from assay.metrics.rag.context_precision import (
    ContextPrecision,
    ContextUtilization,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
)
from assay.metrics.rag.context_recall import ContextRecall, LLMContextRecall
from assay.metrics.rag.dual_judge import AnswerAccuracy, ContextRelevance, ResponseGroundedness
from assay.metrics.rag.factual_correctness import FactualCorrectness
from assay.metrics.rag.faithfulness import Faithfulness
from assay.metrics.rag.multimodal import MultiModalFaithfulness, MultiModalRelevance
from assay.metrics.rag.noise_sensitivity import NoiseSensitivity

__all__ = [
    "AnswerAccuracy",
    "AnswerRelevancy",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "ContextUtilization",
    "FactualCorrectness",
    "Faithfulness",
    "LLMContextPrecisionWithReference",
    "LLMContextPrecisionWithoutReference",
    "LLMContextRecall",
    "MultiModalFaithfulness",
    "MultiModalRelevance",
    "NoiseSensitivity",
    "ResponseGroundedness",
    "ResponseRelevancy",
]
