# ruff: noqa
# Docs: Traditional NLP Metrics > BLEU Score > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.7071067811865478
from assay.dataset_schema import SingleTurnSample
from assay.metrics import BleuScore

sample = SingleTurnSample(
    response="The Eiffel Tower is located in India.",
    reference="The Eiffel Tower is located in Paris.",
)

scorer = BleuScore()
await scorer.single_turn_ascore(sample)
