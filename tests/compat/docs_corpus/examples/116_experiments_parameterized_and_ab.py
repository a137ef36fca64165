# ruff: noqa
# Docs: Experiments > Parameterized Experiments, A/B Testing, Error Handling in Experiments
# Changes:
#   - ragas -> assay in imports
#   - filled in: my_system_function, system_variant_a/_b and the dataset (the docs leave them to
#     the reader)
#   - top-level await: run by the corpus runner as a notebook cell
from assay import Dataset, experiment  # filled in: the page's earlier imports


async def my_system_function(text, model="gpt-4o", temperature=0.0):  # filled in
    return f"{model}@{temperature}: {text}"


async def system_variant_a(text):  # filled in
    return f"A: {text}"


async def system_variant_b(text):  # filled in
    return f"B: {text}"


dataset = Dataset(name="inputs", backend="inmemory")  # filled in
dataset.append({"input": "What is Ragas?"})  # filled in


@experiment()
async def model_comparison_experiment(row, model_name: str, temperature: float):
    # Configure your system with the parameters
    response = await my_system_function(row["input"], model=model_name, temperature=temperature)

    return {
        **row,
        "response": response,
        "experiment_name": f"{model_name}_temp_{temperature}",
        "model_name": model_name,
        "temperature": temperature,
    }


# Run with different parameters
results_gpt4 = await model_comparison_experiment.arun(dataset, model_name="gpt-4o", temperature=0.1)

results_gpt35 = await model_comparison_experiment.arun(
    dataset, model_name="gpt-3.5-turbo", temperature=0.1
)


@experiment()
async def ab_test_experiment(row, variant: str):
    if variant == "A":
        response = await system_variant_a(row["input"])
    else:
        response = await system_variant_b(row["input"])

    return {
        **row,
        "response": response,
        "variant": variant,
        "experiment_name": f"ab_test_variant_{variant}",
    }


# Run both variants
results_a = await ab_test_experiment.arun(dataset, variant="A")
results_b = await ab_test_experiment.arun(dataset, variant="B")


@experiment()
async def robust_experiment(row):
    try:
        response = await my_system_function(row["input"])
        error = None
    except Exception as e:
        response = None
        error = str(e)

    return {
        **row,
        "response": response,
        "error": error,
        "success": error is None,
        "experiment_name": "robust_v1",
    }
