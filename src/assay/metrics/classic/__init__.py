"""Metrics computed without any model: string overlap, IDs, tool calls, SQL result sets."""

from assay.metrics.classic.exact_match import ExactMatch, StringPresence

__all__ = ["ExactMatch", "StringPresence"]
