"""Metrics computed without any model: string overlap, IDs, tool calls, SQL result sets."""

from assay.metrics.classic.bleu import BleuScore
from assay.metrics.classic.chrf import CHRFScore, ChrfScore
from assay.metrics.classic.datacompy_score import DataCompyScore
from assay.metrics.classic.exact_match import ExactMatch, StringPresence
from assay.metrics.classic.id_context import IDBasedContextPrecision, IDBasedContextRecall
from assay.metrics.classic.non_llm_context import (
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
)
from assay.metrics.classic.rouge import RougeScore
from assay.metrics.classic.string_similarity import DistanceMeasure, NonLLMStringSimilarity
from assay.metrics.classic.tool_call_accuracy import ToolCallAccuracy
from assay.metrics.classic.tool_call_f1 import ToolCallF1

__all__ = [
    "BleuScore",
    "CHRFScore",
    "ChrfScore",
    "DataCompyScore",
    "DistanceMeasure",
    "ExactMatch",
    "IDBasedContextPrecision",
    "IDBasedContextRecall",
    "NonLLMContextPrecisionWithReference",
    "NonLLMContextRecall",
    "NonLLMStringSimilarity",
    "RougeScore",
    "StringPresence",
    "ToolCallAccuracy",
    "ToolCallF1",
]
