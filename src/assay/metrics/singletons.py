"""Ragas' ready-made metric instances, by their lowercase names: `from assay import faithfulness`.

Each is a metric with assay's default settings and no model. `evaluate` gives it the run's model in a
copy (`with_models`), so an instance is never bound to one run's model; scored on its own it uses the
configured default judge. `evaluate(metrics=None)` runs Ragas' default list, `DEFAULT_METRICS`.
"""

from __future__ import annotations

from assay.metrics.answer import AnswerCorrectness, SemanticSimilarity, SummaryScore
from assay.metrics.general import RubricsScoreWithoutReference, RubricsScoreWithReference
from assay.metrics.rag import (
    AnswerRelevancy,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextUtilization,
    Faithfulness,
    MultiModalFaithfulness,
    MultiModalRelevance,
)

faithfulness = Faithfulness()
answer_relevancy = AnswerRelevancy()
context_precision = ContextPrecision()
context_recall = ContextRecall()
context_utilization = ContextUtilization()
context_entity_recall = ContextEntityRecall()
answer_similarity = SemanticSimilarity(name="answer_similarity")
answer_correctness = AnswerCorrectness()
summarization_score = SummaryScore()
rubrics_score_with_reference = RubricsScoreWithReference()
rubrics_score_without_reference = RubricsScoreWithoutReference()
multimodal_faithness = MultiModalFaithfulness()
multimodal_relevance = MultiModalRelevance()

# What Ragas' evaluate() runs when no metric is named, in its order.
DEFAULT_METRICS = (answer_relevancy, context_precision, faithfulness, context_recall)

__all__ = [
    "answer_correctness",
    "answer_relevancy",
    "answer_similarity",
    "context_entity_recall",
    "context_precision",
    "context_recall",
    "context_utilization",
    "faithfulness",
    "multimodal_faithness",
    "multimodal_relevance",
    "rubrics_score_with_reference",
    "rubrics_score_without_reference",
    "summarization_score",
]
