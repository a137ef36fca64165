# ruff: noqa
# Docs: Overview of Metrics > Single turn metrics
# Changes:
#   - ragas -> assay in imports
#   - filled in: sample (the docs leave it to the reader)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay import SingleTurnSample  # filled in

sample = SingleTurnSample(  # filled in
    response="The Eiffel Tower is located in Paris.",
    reference="The Eiffel Tower is located in Paris. It has a height of 1000ft.",
)

from assay.metrics import FactualCorrectness

scorer = FactualCorrectness()
await scorer.single_turn_ascore(sample)
