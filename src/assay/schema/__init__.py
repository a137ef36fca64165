"""Data model: samples, messages, datasets, outcomes and results."""

from assay.schema.dataset import EvaluationDataset
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.schema.outcome import Cell, Error, MetricResult, Ok, Outcome, Skipped
from assay.schema.result import EvaluationResult, MetricSummary
from assay.schema.samples import MultiTurnSample, SingleTurnSample
from assay.schema.usage import Usage

__all__ = [
    "AIMessage",
    "Cell",
    "Error",
    "EvaluationDataset",
    "EvaluationResult",
    "HumanMessage",
    "MetricResult",
    "MetricSummary",
    "MultiTurnSample",
    "Ok",
    "Outcome",
    "SingleTurnSample",
    "Skipped",
    "ToolCall",
    "ToolMessage",
    "Usage",
]
