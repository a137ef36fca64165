# ruff: noqa
# Docs: Factual Correctness > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.dataset_schema import SingleTurnSample
from assay.metrics._factual_correctness import FactualCorrectness

from assay.llms import llm_factory  # filled in: the evaluator LLM the docs leave to the reader

evaluator_llm = llm_factory("gpt-4o")  # filled in

sample = SingleTurnSample(
    response="The Eiffel Tower is located in Paris.",
    reference="The Eiffel Tower is located in Paris. I has a height of 1000ft.",
)

scorer = FactualCorrectness(llm=evaluator_llm)
await scorer.single_turn_ascore(sample)
