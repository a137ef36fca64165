# ruff: noqa
# Docs: Evaluate a simple LLM application > Basic Setup, Build a Simple RAG System,
#       Collect Evaluation Data, Evaluate (the page's cells in order)
# Changes:
#   - ragas -> assay in imports
#   - model: ChatOpenAI / openai.OpenAI reach the loopback server via OPENAI_BASE_URL
#   - filled in: sample_docs, sample_queries, expected_responses (the page lists them in prose)
#   - filled in: `result` is displayed at the end, as in the notebook
# corpus: requires langchain_openai
# corpus: calls-model
from langchain_openai import ChatOpenAI
from assay.embeddings import OpenAIEmbeddings
import openai

llm = ChatOpenAI(model="gpt-4o")
openai_client = openai.OpenAI()
embeddings = OpenAIEmbeddings(client=openai_client)

import numpy as np


class RAG:
    def __init__(self, model="gpt-4o"):
        import openai

        self.llm = ChatOpenAI(model=model)
        openai_client = openai.OpenAI()
        self.embeddings = OpenAIEmbeddings(client=openai_client)
        self.doc_embeddings = None
        self.docs = None

    def load_documents(self, documents):
        """Load documents and compute their embeddings."""
        self.docs = documents
        self.doc_embeddings = self.embeddings.embed_texts(documents)

    def get_most_relevant_docs(self, query):
        """Find the most relevant document for a given query."""
        if not self.docs or not self.doc_embeddings:
            raise ValueError("Documents and their embeddings are not loaded.")

        query_embedding = self.embeddings.embed_text(query)
        similarities = [
            np.dot(query_embedding, doc_emb)
            / (np.linalg.norm(query_embedding) * np.linalg.norm(doc_emb))
            for doc_emb in self.doc_embeddings
        ]
        most_relevant_doc_index = np.argmax(similarities)
        return [self.docs[most_relevant_doc_index]]

    def generate_answer(self, query, relevant_doc):
        """Generate an answer for a given query based on the most relevant document."""
        prompt = f"question: {query}\n\nDocuments: {relevant_doc}"
        messages = [
            (
                "system",
                "You are a helpful assistant that answers questions based on given documents only.",
            ),
            ("human", prompt),
        ]
        ai_msg = self.llm.invoke(messages)
        return ai_msg.content


# filled in: the page's sample documents, queries and expected responses
sample_docs = [
    "Albert Einstein proposed the theory of relativity, which transformed our understanding of time, space, and gravity.",
    "Marie Curie was a physicist and chemist who conducted pioneering research on radioactivity and won two Nobel Prizes.",
]
sample_queries = [
    "Who introduced the theory of relativity?",
    "Who was the first female recipient of a Nobel Prize?",
]
expected_responses = [
    "Albert Einstein proposed the theory of relativity, which laid the foundation for modern physics.",
    "Marie Curie was the first female recipient of a Nobel Prize.",
]

rag = RAG()
rag.load_documents(sample_docs)

dataset = []

for query, reference in zip(sample_queries, expected_responses):
    relevant_docs = rag.get_most_relevant_docs(query)
    response = rag.generate_answer(query, relevant_docs)
    dataset.append(
        {
            "user_input": query,
            "retrieved_contexts": relevant_docs,
            "response": response,
            "reference": reference,
        }
    )

from assay import EvaluationDataset

evaluation_dataset = EvaluationDataset.from_list(dataset)

from assay import evaluate
from assay.llms import LangchainLLMWrapper

evaluator_llm = LangchainLLMWrapper(llm)
from assay.metrics import LLMContextRecall, Faithfulness, FactualCorrectness

result = evaluate(
    dataset=evaluation_dataset,
    metrics=[LLMContextRecall(), Faithfulness(), FactualCorrectness()],
    llm=evaluator_llm,
)
result
