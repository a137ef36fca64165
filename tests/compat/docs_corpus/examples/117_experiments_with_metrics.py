# ruff: noqa
# Docs: Experiments > Integrating with Metrics
# Changes:
#   - ragas -> assay in imports
#   - filled in: my_system_function, the `experiment` import and a dataset plus the .arun() call
#     (the docs leave them to the reader)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay import Dataset, experiment  # filled in


async def my_system_function(text):  # filled in
    return "The Eiffel Tower is located in Paris."


from assay.metrics import FactualCorrectness


@experiment()
async def evaluated_experiment(row):
    response = await my_system_function(row["input"])

    # Calculate metrics inline
    factual_score = FactualCorrectness().score(response=response, reference=row["expected_output"])

    return {
        **row,
        "response": response,
        "factual_correctness": factual_score.value,
        "factual_reason": factual_score.reason,
        "experiment_name": "evaluated_v1",
    }


dataset = Dataset(name="inputs", backend="inmemory")  # filled in
dataset.append({"input": "Where is the Eiffel Tower?", "expected_output": "In Paris."})  # filled in
results = await evaluated_experiment.arun(dataset)  # filled in
