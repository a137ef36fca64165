# ruff: noqa
# Docs: Traditional NLP Metrics > CHRF Score > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-approx 0.8048 5e-5 result.value
from assay.metrics.collections import CHRFScore

# Create metric (no LLM/embeddings needed)
scorer = CHRFScore()

# Evaluate
result = await scorer.ascore(
    reference="The Eiffel Tower is located in Paris.",
    response="The Eiffel Tower is located in India.",
)
print(f"CHRF Score: {result.value}")
