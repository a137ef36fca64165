# ruff: noqa
# Docs: Traditional NLP Metrics > String Presence > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 1.0
from assay.dataset_schema import SingleTurnSample
from assay.metrics import StringPresence

sample = SingleTurnSample(
    response="The Eiffel Tower is located in India.",
    reference="Eiffel Tower",
)

scorer = StringPresence()
await scorer.single_turn_ascore(sample)
