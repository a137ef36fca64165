# ruff: noqa
# Docs: Traditional NLP Metrics > Non LLM String Similarity > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.8918918918918919
from assay.dataset_schema import SingleTurnSample
from assay.metrics._string import NonLLMStringSimilarity

sample = SingleTurnSample(
    response="The Eiffel Tower is located in India.",
    reference="The Eiffel Tower is located in Paris.",
)

scorer = NonLLMStringSimilarity()
await scorer.single_turn_ascore(sample)
