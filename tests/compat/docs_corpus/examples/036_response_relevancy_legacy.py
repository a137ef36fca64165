# ruff: noqa
# Docs: Answer Relevancy > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm and evaluator_embeddings (the docs leave them to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay import SingleTurnSample
from assay.metrics import ResponseRelevancy

from assay.llms import llm_factory  # filled in: the evaluator LLM the docs leave to the reader

evaluator_llm = llm_factory("gpt-4o")  # filled in
from assay.embeddings import embedding_factory  # filled in

evaluator_embeddings = embedding_factory("openai", model="text-embedding-3-small")  # filled in

sample = SingleTurnSample(
    user_input="When was the first super bowl?",
    response="The first superbowl was held on Jan 15, 1967",
    retrieved_contexts=[
        "The First AFL–NFL World Championship Game was an American football game played on January 15, 1967, at the Los Angeles Memorial Coliseum in Los Angeles."
    ],
)

scorer = ResponseRelevancy(llm=evaluator_llm, embeddings=evaluator_embeddings)
await scorer.single_turn_ascore(sample)
