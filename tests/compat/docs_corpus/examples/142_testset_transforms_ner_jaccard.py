# ruff: noqa
# Docs: Testset Generation for RAG > Knowledge Graph Creation (Document Splitter, Extractors,
#       Relationship builder, Transforms; the page's cells in order)
# Changes:
#   - ragas -> assay in imports
#   - model: NERExtractor() names no model; the default judge is the loopback server (ASSAY_LLM)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.testset.graph import Node

sample_nodes = [
    Node(
        properties={
            "page_content": "Einstein's theory of relativity revolutionized our understanding of space and time. It introduced the concept that time is not absolute but can change depending on the observer's frame of reference."
        }
    ),
    Node(
        properties={
            "page_content": "Time dilation occurs when an object moves close to the speed of light, causing time to pass slower relative to a stationary observer. This phenomenon is a key prediction of Einstein's special theory of relativity."
        }
    ),
]
sample_nodes

from assay.testset.transforms.extractors import NERExtractor

extractor = NERExtractor()
output = [await extractor.extract(node) for node in sample_nodes]
output[0]

_ = [node.properties.update({key: val}) for (key, val), node in zip(output, sample_nodes)]
sample_nodes[0].properties

from assay.testset.graph import KnowledgeGraph
from assay.testset.transforms.relationship_builders.traditional import JaccardSimilarityBuilder

kg = KnowledgeGraph(nodes=sample_nodes)
rel_builder = JaccardSimilarityBuilder(
    property_name="entities", key_name="PER", new_property_name="entity_jaccard_similarity"
)
relationships = await rel_builder.transform(kg)
relationships

from assay.testset.transforms import apply_transforms

transforms = [extractor, rel_builder]

apply_transforms(kg, transforms)

from assay.testset.transforms import KeyphraseExtractor, NERExtractor
from assay.testset.transforms import apply_transforms, Parallel

tranforms = [Parallel(KeyphraseExtractor(), NERExtractor()), rel_builder]

apply_transforms(kg, tranforms)
