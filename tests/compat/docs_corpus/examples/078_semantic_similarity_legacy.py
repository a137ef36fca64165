# ruff: noqa
# Docs: Semantic Similarity > Legacy Metrics API > Example with SingleTurnSample
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_embedding, a LangChain embeddings object (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: requires langchain_openai
# corpus: calls-model
from assay.dataset_schema import SingleTurnSample
from assay.metrics import SemanticSimilarity
from assay.embeddings import LangchainEmbeddingsWrapper

from langchain_openai import OpenAIEmbeddings  # filled in

evaluator_embedding = OpenAIEmbeddings(model="text-embedding-3-small")  # filled in

sample = SingleTurnSample(
    response="The Eiffel Tower is located in Paris.",
    reference="The Eiffel Tower is located in Paris. It has a height of 1000ft.",
)

scorer = SemanticSimilarity(embeddings=LangchainEmbeddingsWrapper(evaluator_embedding))
await scorer.single_turn_ascore(sample)
