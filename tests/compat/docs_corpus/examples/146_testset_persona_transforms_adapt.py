# ruff: noqa
# Docs: Synthetic test generation from non-English corpus > Personas, Transforms, Initialize test
#       generator, Load and Adapt Queries (the page's cells in order)
# Changes:
#   - ragas -> assay in imports
#   - filled in: generator_llm and generator_embeddings (the page builds them with
#     langchain_openai; here llm_factory / embedding_factory)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.llms import llm_factory  # filled in
from assay.embeddings import embedding_factory  # filled in

generator_llm = llm_factory("gpt-4o-mini")  # filled in
generator_embeddings = embedding_factory("openai", model="text-embedding-3-small")  # filled in

from assay.testset.persona import Persona

personas = [
    Persona(
        name="curious student",
        role_description="A student who is curious about the world and wants to learn more about different cultures and languages",
    ),
]

from assay.testset.transforms.extractors.llm_based import NERExtractor
from assay.testset.transforms.splitters import HeadlineSplitter

transforms = [HeadlineSplitter(), NERExtractor()]

from assay.testset import TestsetGenerator

generator = TestsetGenerator(
    llm=generator_llm, embedding_model=generator_embeddings, persona_list=personas
)

from assay.testset.synthesizers.single_hop.specific import (
    SingleHopSpecificQuerySynthesizer,
)

distribution = [
    (SingleHopSpecificQuerySynthesizer(llm=generator_llm), 1.0),
]

for query, _ in distribution:
    prompts = await query.adapt_prompts("spanish", llm=generator_llm)
    query.set_prompts(**prompts)
