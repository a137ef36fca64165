# ruff: noqa
# Docs: Traditional NLP Metrics > BLEU Score > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-stdout BLEU Score: 0.7071067811865478
from assay.metrics.collections import BleuScore

# Create metric
scorer = BleuScore()

# Evaluate
result = await scorer.ascore(
    reference="The Eiffel Tower is located in Paris.",
    response="The Eiffel Tower is located in India.",
)
print(f"BLEU Score: {result.value}")
