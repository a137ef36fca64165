# ruff: noqa
# Docs: API Reference > evaluate() (Examples)
# Changes:
#   - ragas -> assay in imports
#   - filled in: dataset, a Hugging Face Dataset with the docstring's features (question,
#     ground_truth, answer, contexts); the evaluate import
#   - the doctest prompts (>>>) removed
#   - model: none named; the default judge is the loopback server (ASSAY_LLM / ASSAY_EMBEDDINGS)
# corpus: calls-model
from datasets import Dataset  # filled in
from assay import evaluate  # filled in

dataset = Dataset.from_dict(  # filled in
    {
        "question": ["When was the first super bowl?"],
        "ground_truth": ["The first superbowl was held on January 15, 1967"],
        "answer": ["The first superbowl was held on Jan 15, 1967"],
        "contexts": [["The First AFL–NFL World Championship Game was played on January 15, 1967."]],
    }
)

dataset
result = evaluate(dataset)
print(result)
