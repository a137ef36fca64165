# ruff: noqa
# Docs: Traditional NLP Metrics > Exact Match > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.0
from assay.dataset_schema import SingleTurnSample
from assay.metrics import ExactMatch

sample = SingleTurnSample(
    response="India",
    reference="Paris",
)

scorer = ExactMatch()
await scorer.single_turn_ascore(sample)
