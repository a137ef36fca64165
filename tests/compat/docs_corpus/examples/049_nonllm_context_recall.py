# ruff: noqa
# Docs: Context Recall > Non LLM Based Context Recall > Example
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 0.5
from assay.dataset_schema import SingleTurnSample
from assay.metrics import NonLLMContextRecall

sample = SingleTurnSample(
    retrieved_contexts=["Paris is the capital of France."],
    reference_contexts=[
        "Paris is the capital of France.",
        "The Eiffel Tower is one of the most famous landmarks in Paris.",
    ],
)

context_recall = NonLLMContextRecall()
await context_recall.single_turn_ascore(sample)
