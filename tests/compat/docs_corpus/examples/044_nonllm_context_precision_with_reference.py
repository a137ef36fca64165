# ruff: noqa
# Docs: Context Precision > Non LLM Based Context Precision > Context Precision with reference contexts
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-approx 0.9999999999 1e-12
from assay import SingleTurnSample
from assay.metrics import NonLLMContextPrecisionWithReference

context_precision = NonLLMContextPrecisionWithReference()

sample = SingleTurnSample(
    retrieved_contexts=["The Eiffel Tower is located in Paris."],
    reference_contexts=[
        "Paris is the capital of France.",
        "The Eiffel Tower is one of the most famous landmarks in Paris.",
    ],
)

await context_precision.single_turn_ascore(sample)
