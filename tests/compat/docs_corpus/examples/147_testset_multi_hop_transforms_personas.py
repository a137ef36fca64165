# ruff: noqa
# Docs: Create custom multi-hop queries from your documents > Create KG, Set up the LLM and Embedding
#       Model, Setup Extractors and Relationship builders, Configure personas (cells in order)
# Changes:
#   - ragas -> assay in imports
#   - filled in: docs, two LangChain documents (the page loads them with langchain_community)
#   - model: OpenAI() reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from langchain_core.documents import Document  # filled in

docs = [  # filled in
    Document(
        page_content="# Hiring\nGitLab hires globally. Hiring managers review candidates.\n# Diversity\nGitLab values diversity, inclusion and belonging.",
        metadata={"source": "hiring.md"},
    ),
    Document(
        page_content="# Values\nCollaboration and results matter at GitLab.\n# Inclusion\nDiversity, inclusion and belonging goals guide hiring.",
        metadata={"source": "values.md"},
    ),
]

from assay.testset.graph import KnowledgeGraph
from assay.testset.graph import Node, NodeType

kg = KnowledgeGraph()
for doc in docs:
    kg.nodes.append(
        Node(
            type=NodeType.DOCUMENT,
            properties={
                "page_content": doc.page_content,
                "document_metadata": doc.metadata,
            },
        )
    )

from openai import OpenAI
from assay.llms import llm_factory
from assay.embeddings import OpenAIEmbeddings

openai_client = OpenAI()
llm = llm_factory("gpt-4o-mini", client=openai_client)
embedding = OpenAIEmbeddings(client=openai_client)

from assay.testset.transforms import Parallel, apply_transforms
from assay.testset.transforms import (
    HeadlinesExtractor,
    HeadlineSplitter,
    KeyphrasesExtractor,
    OverlapScoreBuilder,
)

headline_extractor = HeadlinesExtractor(llm=llm)
headline_splitter = HeadlineSplitter(min_tokens=300, max_tokens=1000)
keyphrase_extractor = KeyphrasesExtractor(llm=llm, property_name="keyphrases", max_num=10)
relation_builder = OverlapScoreBuilder(
    property_name="keyphrases",
    new_property_name="overlap_score",
    threshold=0.01,
    distance_threshold=0.9,
)

transforms = [
    headline_extractor,
    headline_splitter,
    keyphrase_extractor,
    relation_builder,
]

apply_transforms(kg, transforms=transforms)

from assay.testset.persona import Persona

person1 = Persona(
    name="gitlab employee",
    role_description="A junior gitlab employee curious on workings on gitlab",
)
persona2 = Persona(
    name="Hiring manager at gitlab",
    role_description="A hiring manager at gitlab trying to underestand hiring policies in gitlab",
)
persona_list = [person1, persona2]
