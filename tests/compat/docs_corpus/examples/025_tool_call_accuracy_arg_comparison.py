# ruff: noqa
# Docs: Agentic or Tool use > Tool call Accuracy > Legacy API (custom argument comparison)
# Changes:
#   - ragas -> assay in imports
from assay.metrics._string import NonLLMStringSimilarity
from assay.metrics._tool_call_accuracy import ToolCallAccuracy

metric = ToolCallAccuracy()
metric.arg_comparison_metric = NonLLMStringSimilarity()
