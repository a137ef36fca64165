# ruff: noqa
# Docs: Traditional NLP Metrics > Non LLM String Similarity > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-stdout NonLLM String Similarity Score: 0.8918918918918919
from assay.metrics.collections import NonLLMStringSimilarity, DistanceMeasure

# Create metric (no LLM/embeddings needed)
scorer = NonLLMStringSimilarity(distance_measure=DistanceMeasure.LEVENSHTEIN)

# Evaluate
result = await scorer.ascore(
    reference="The Eiffel Tower is located in Paris.",
    response="The Eiffel Tower is located in India.",
)
print(f"NonLLM String Similarity Score: {result.value}")
