# ruff: noqa
# Docs: Traditional NLP Metrics > String Presence > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-stdout String Presence Score: 1.0
from assay.metrics.collections import StringPresence

# Create metric (no LLM/embeddings needed)
scorer = StringPresence()

# Evaluate
result = await scorer.ascore(
    reference="Eiffel Tower",
    response="The Eiffel Tower is located in India.",
)
print(f"String Presence Score: {result.value}")
