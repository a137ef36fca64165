# ruff: noqa
# Docs: Optimizers API Reference > GeneticOptimizer > Usage
# Changes:
#   - ragas -> assay in imports
#   - filled in: llm, metric and an annotated dataset (the docs leave them to the reader)
#   - model: llm_factory(...) reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from assay.llms import llm_factory  # filled in
from assay.metrics.collections import Faithfulness  # filled in

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


llm = llm_factory("gpt-4o-mini")  # filled in
metric = Faithfulness(llm=llm)  # filled in
dataset = create_annotated_dataset()  # filled in

from assay.optimizers import GeneticOptimizer
from assay.config import InstructionConfig

optimizer = GeneticOptimizer(
    max_steps=50,
    population_size=10,
)

config = InstructionConfig(llm=llm, optimizer=optimizer)
metric.optimize_prompts(dataset, config)
