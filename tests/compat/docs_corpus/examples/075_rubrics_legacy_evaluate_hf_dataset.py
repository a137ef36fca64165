# ruff: noqa
# Docs: Rubric-Based Evaluation > Legacy API
# Changes:
#   - ragas -> assay in imports
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
# corpus: calls-model
from assay import evaluate
from datasets import Dataset
from assay.metrics import rubrics_score_without_reference, rubrics_score_with_reference

rows = {
    "question": [
        "What's the longest river in the world?",
    ],
    "ground_truth": [
        "The Nile is a major north-flowing river in northeastern Africa.",
    ],
    "answer": [
        "The longest river in the world is the Nile, stretching approximately 6,650 kilometers (4,130 miles) through northeastern Africa.",
    ],
    "contexts": [
        [
            "Scientists debate whether the Amazon or the Nile is the longest river in the world.",
            "The Nile River was central to the Ancient Egyptians' rise to wealth and power.",
        ],
    ],
}

dataset = Dataset.from_dict(rows)

result = evaluate(
    dataset,
    metrics=[rubrics_score_without_reference, rubrics_score_with_reference],
)
