"""Metrics for retrieval-augmented generation, judged by an LLM (and embeddings where noted)."""

from assay.metrics.rag.answer_relevancy import AnswerRelevancy, ResponseRelevancy
from assay.metrics.rag.context_precision import (
    ContextPrecision,
    ContextUtilization,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
)
from assay.metrics.rag.context_recall import ContextRecall, LLMContextRecall
from assay.metrics.rag.factual_correctness import FactualCorrectness
from assay.metrics.rag.faithfulness import Faithfulness

__all__ = [
    "AnswerRelevancy",
    "ContextPrecision",
    "ContextRecall",
    "ContextUtilization",
    "FactualCorrectness",
    "Faithfulness",
    "LLMContextPrecisionWithReference",
    "LLMContextPrecisionWithoutReference",
    "LLMContextRecall",
    "ResponseRelevancy",
]
