# ruff: noqa
# Docs: Generate Testset from Pre-chunked Data > Example: Using Plain Strings
# Changes:
#   - ragas -> assay in imports
#   - model: OpenAI() reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from assay.testset.synthesizers.generate import TestsetGenerator
from assay.llms import llm_factory
from assay.embeddings import OpenAIEmbeddings
from openai import OpenAI

# Initialize models
client = OpenAI()
generator = TestsetGenerator(
    llm=llm_factory("gpt-4o-mini", client=client),
    embedding_model=OpenAIEmbeddings(client=client),
)

# Simple text chunks
text_chunks = [
    "Artificial Intelligence (AI) is the simulation of human intelligence by machines. It involves machine learning, natural language processing, and computer vision.",
    "Machine Learning is a subset of AI that enables systems to learn from data without explicit programming. Popular algorithms include neural networks and decision trees.",
    "Deep Learning uses neural networks with multiple layers to process complex patterns in large datasets. It powers modern applications like image recognition and language translation.",
]

# Generate testset
testset = generator.generate_with_chunks(chunks=text_chunks, testset_size=5)

# Save to CSV
output_file = "testset.csv"
testset.to_csv(output_file)
print(f"Testset saved to {output_file}")
print(testset.to_pandas())
