"""Metrics that compare a response with a reference answer or a source text."""

from assay.metrics.answer.answer_correctness import AnswerCorrectness
from assay.metrics.answer.semantic_similarity import AnswerSimilarity, SemanticSimilarity
from assay.metrics.answer.summary_score import SummarizationScore, SummaryScore

__all__ = [
    "AnswerCorrectness",
    "AnswerSimilarity",
    "SemanticSimilarity",
    "SummarizationScore",
    "SummaryScore",
]
