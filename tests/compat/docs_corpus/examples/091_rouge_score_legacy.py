# ruff: noqa
# Docs: Traditional NLP Metrics > ROUGE Score > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.8571428571428571
from assay.dataset_schema import SingleTurnSample
from assay.metrics import RougeScore

sample = SingleTurnSample(
    response="The Eiffel Tower is located in India.",
    reference="The Eiffel Tower is located in Paris.",
)

scorer = RougeScore()
await scorer.single_turn_ascore(sample)
