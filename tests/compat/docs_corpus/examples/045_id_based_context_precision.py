# ruff: noqa
# Docs: Context Precision > ID Based Context Precision > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.5
from assay import SingleTurnSample
from assay.metrics import IDBasedContextPrecision

sample = SingleTurnSample(
    retrieved_context_ids=["doc_1", "doc_2", "doc_3", "doc_4"],
    reference_context_ids=["doc_1", "doc_4", "doc_5", "doc_6"],
)

id_precision = IDBasedContextPrecision()
await id_precision.single_turn_ascore(sample)
