# ruff: noqa
# Docs: Nvidia Metrics > Context Relevance > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.dataset_schema import SingleTurnSample
from assay.metrics import ContextRelevance

from assay.llms import llm_factory  # filled in: the evaluator LLM the docs leave to the reader

evaluator_llm = llm_factory("gpt-4o")  # filled in

sample = SingleTurnSample(
    user_input="When and Where Albert Einstein was born?",
    retrieved_contexts=[
        "Albert Einstein was born March 14, 1879.",
        "Albert Einstein was born at Ulm, in Württemberg, Germany.",
    ],
)

scorer = ContextRelevance(llm=evaluator_llm)
score = await scorer.single_turn_ascore(sample)
print(score)
