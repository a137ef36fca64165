# ruff: noqa
# Docs: Context Recall > ID Based Context Recall > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.25
from assay.dataset_schema import SingleTurnSample
from assay.metrics import IDBasedContextRecall

sample = SingleTurnSample(
    retrieved_context_ids=["doc_1", "doc_2", "doc_3"],
    reference_context_ids=["doc_1", "doc_4", "doc_5", "doc_6"],
)

id_recall = IDBasedContextRecall()
await id_recall.single_turn_ascore(sample)
