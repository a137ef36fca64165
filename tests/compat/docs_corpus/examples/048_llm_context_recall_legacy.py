# ruff: noqa
# Docs: Context Recall > LLM Based Context Recall (Legacy API)
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.dataset_schema import SingleTurnSample
from assay.metrics import LLMContextRecall

from assay.llms import llm_factory  # filled in: the evaluator LLM the docs leave to the reader

evaluator_llm = llm_factory("gpt-4o")  # filled in

sample = SingleTurnSample(
    user_input="Where is the Eiffel Tower located?",
    response="The Eiffel Tower is located in Paris.",
    reference="The Eiffel Tower is located in Paris.",
    retrieved_contexts=["Paris is the capital of France."],
)

context_recall = LLMContextRecall(llm=evaluator_llm)
await context_recall.single_turn_ascore(sample)
