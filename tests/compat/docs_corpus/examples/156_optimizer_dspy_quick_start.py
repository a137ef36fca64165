# ruff: noqa
# Docs: Optimizing Metric Prompts with DSPy > Quick Start
# Changes:
#   - ragas -> assay in imports
#   - filled in: create_annotated_dataset() (the docs leave it to the reader; "see below for format")
#   - model: OpenAI() reaches the loopback server via OPENAI_BASE_URL
# corpus: requires dspy
# corpus: calls-model
from assay.dataset_schema import (
    PromptAnnotation,
    SampleAnnotation,
    SingleMetricAnnotation,
)  # filled in


def create_annotated_dataset():  # filled in: the "Annotated Dataset Format" of the docs, 4 samples
    samples = []
    for i, score in enumerate([1.0, 0.0, 1.0, 0.0]):
        metric_input = {
            "user_input": f"Question {i}?",
            "response": f"Answer {i}.",
            "retrieved_contexts": [f"Context {i}."],
        }
        prompt_annotation = PromptAnnotation(
            prompt_input={
                "user_input": metric_input["user_input"],
                "response": metric_input["response"],
            },
            prompt_output={"score": score},
            edited_output=None,
        )
        samples.append(
            SampleAnnotation(
                metric_input=metric_input,
                metric_output=score,
                prompts={"faithfulness_prompt": prompt_annotation},
                is_accepted=True,
            )
        )
    return SingleMetricAnnotation(name="faithfulness", samples=samples)


from openai import OpenAI
from assay.llms import llm_factory
from assay.metrics.collections import Faithfulness
from assay.optimizers import DSPyOptimizer
from assay.config import InstructionConfig

# Setup LLM for optimization
client = OpenAI()
llm = llm_factory("gpt-4o-mini", client=client)

# Initialize metric
metric = Faithfulness(llm=llm)

# Create annotated dataset (see below for format)
dataset = create_annotated_dataset()

# Configure DSPy optimizer
config = InstructionConfig(
    llm=llm,
    optimizer=DSPyOptimizer(
        num_candidates=10,  # Try 10 prompt variations
        max_bootstrapped_demos=5,  # Generate up to 5 examples
        max_labeled_demos=5,  # Use up to 5 human annotations
    ),
)

# Optimize the metric's prompts
metric.optimize_prompts(dataset, config)

# Save optimized prompts for reuse
metric.save_prompts("optimized_faithfulness.json")
