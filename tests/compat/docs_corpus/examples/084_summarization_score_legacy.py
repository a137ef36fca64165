# ruff: noqa
# Docs: Tasks Metrics > Summarization Score > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.dataset_schema import SingleTurnSample
from assay.metrics import SummarizationScore

from assay.llms import llm_factory  # filled in: the evaluator LLM the docs leave to the reader

evaluator_llm = llm_factory("gpt-4o")  # filled in

sample = SingleTurnSample(
    response="A company is launching a fitness tracking app that helps users set exercise goals, log meals, and track water intake, with personalized workout suggestions and motivational reminders.",
    reference_contexts=[
        "A company is launching a new product, a smartphone app designed to help users track their fitness goals. The app allows users to set daily exercise targets, log their meals, and track their water intake. It also provides personalized workout recommendations and sends motivational reminders throughout the day."
    ],
)

scorer = SummarizationScore(llm=evaluator_llm)
await scorer.single_turn_ascore(sample)
