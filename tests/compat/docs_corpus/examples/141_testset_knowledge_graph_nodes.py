# ruff: noqa
# Docs: Testset Generation for RAG > KnowledgeGraph Creation (three cells: create, add documents,
#       save and load)
# Changes:
#   - ragas -> assay in imports
#   - filled in: docs, two LangChain documents (the page loads them with a DirectoryLoader from
#     langchain_community)
# corpus: expect-eval len(loaded_kg.nodes) 2
from langchain_core.documents import Document  # filled in

docs = [  # filled in
    Document(
        page_content="# Onboarding\nNew hires get a laptop on day one.", metadata={"source": "a.md"}
    ),
    Document(
        page_content="# Benefits\nEmployees get 25 days of leave.", metadata={"source": "b.md"}
    ),
]

from assay.testset.graph import KnowledgeGraph

kg = KnowledgeGraph()

from assay.testset.graph import Node, NodeType

for doc in docs:
    kg.nodes.append(
        Node(
            type=NodeType.DOCUMENT,
            properties={"page_content": doc.page_content, "document_metadata": doc.metadata},
        )
    )

kg.save("knowledge_graph.json")
loaded_kg = KnowledgeGraph.load("knowledge_graph.json")
loaded_kg
