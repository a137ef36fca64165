# ruff: noqa
# Docs: Traditional NLP Metrics > CHRF Score > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-approx 0.8048 5e-5
from assay.dataset_schema import SingleTurnSample
from assay.metrics import ChrfScore

sample = SingleTurnSample(
    response="The Eiffel Tower is located in India.",
    reference="The Eiffel Tower is located in Paris.",
)

scorer = ChrfScore()
await scorer.single_turn_ascore(sample)
