# ruff: noqa
# Docs: Testset Generation for RAG > Testset Generation (TestsetGenerator with a knowledge graph,
#       default_query_distribution)
# Changes:
#   - ragas -> assay in imports
#   - filled in: generator_llm, embedding_model (llm_factory / embedding_factory as on the
#     "Customize Models" page) and loaded_kg (an empty KnowledgeGraph)
from assay.llms import llm_factory  # filled in
from assay.embeddings import embedding_factory  # filled in
from assay.testset.graph import KnowledgeGraph  # filled in

generator_llm = llm_factory("gpt-4o-mini")  # filled in
embedding_model = embedding_factory("openai", model="text-embedding-3-small")  # filled in
loaded_kg = KnowledgeGraph()  # filled in

from assay.testset import TestsetGenerator

generator = TestsetGenerator(
    llm=generator_llm, embedding_model=embedding_model, knowledge_graph=loaded_kg
)

from assay.testset.synthesizers import default_query_distribution

query_distribution = default_query_distribution(generator_llm)
