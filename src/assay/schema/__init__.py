"""Data model: samples, messages, datasets, outcomes and results."""

from assay.schema.dataset import EvaluationDataset, RagasDataset
from assay.schema.messages import AIMessage, HumanMessage, Message, ToolCall, ToolMessage
from assay.schema.outcome import Cell, Error, MetricResult, Ok, Outcome, Skipped
from assay.schema.result import EvaluationResult, MetricSummary
from assay.schema.samples import BaseSample, MultiTurnSample, SingleTurnSample
from assay.schema.usage import Usage

__all__ = [
    "AIMessage",
    "BaseSample",
    "Cell",
    "Error",
    "EvaluationDataset",
    "EvaluationResult",
    "HumanMessage",
    "Message",
    "MetricResult",
    "MetricSummary",
    "MultiTurnSample",
    "Ok",
    "Outcome",
    "RagasDataset",
    "SingleTurnSample",
    "Skipped",
    "ToolCall",
    "ToolMessage",
    "Usage",
]
