# ruff: noqa
# Docs: Optimizing Metric Prompts with DSPy > Annotated Dataset Format
# Changes:
#   - ragas -> assay in imports
#   - filled in: the `...` in samples=[sample, ...] (the docs leave the other samples to the reader)
from assay.dataset_schema import PromptAnnotation, SampleAnnotation, SingleMetricAnnotation

# Create prompt annotations
prompt_annotation = PromptAnnotation(
    prompt_input={"user_input": "...", "response": "..."},
    prompt_output={"score": 0.9},  # Actual metric output
    edited_output=None,  # Or corrected output if needed
)

# Create sample with annotations
sample = SampleAnnotation(
    metric_input={"user_input": "...", "response": "..."},
    metric_output=0.9,  # Ground truth score
    prompts={"faithfulness_prompt": prompt_annotation},
    is_accepted=True,  # Whether to use in optimization
)

# Create dataset
dataset = SingleMetricAnnotation(
    name="faithfulness",
    samples=[sample],  # filled in: `[sample, ...]` - Need 20-50+ samples for best results
)
