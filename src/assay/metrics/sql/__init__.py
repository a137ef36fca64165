"""Metrics for text-to-SQL."""

from assay.metrics.sql.sql_equivalence import LLMSQLEquivalence, SQLSemanticEquivalence

__all__ = ["LLMSQLEquivalence", "SQLSemanticEquivalence"]
