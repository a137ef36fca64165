# ruff: noqa
# Docs: Traditional NLP Metrics > Exact Match > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-stdout Exact Match Score: 0.0
from assay.metrics.collections import ExactMatch

# Create metric (no LLM/embeddings needed)
scorer = ExactMatch()

# Evaluate
result = await scorer.ascore(
    reference="Paris",
    response="India",
)
print(f"Exact Match Score: {result.value}")
