# ruff: noqa
# Docs: Answer Correctness > Legacy Metrics API > Example with Dataset
# Changes:
#   - ragas -> assay in imports
#   - model: none named; the default judge is the loopback server (ASSAY_LLM / ASSAY_EMBEDDINGS,
#     as Ragas' default is OpenAI through OPENAI_API_KEY)
# corpus: calls-model
from datasets import Dataset
from assay.metrics import answer_correctness
from assay import evaluate

data_samples = {
    "question": ["When was the first super bowl?", "Who won the most super bowls?"],
    "answer": [
        "The first superbowl was held on Jan 15, 1967",
        "The most super bowls have been won by The New England Patriots",
    ],
    "ground_truth": [
        "The first superbowl was held on January 15, 1967",
        "The New England Patriots have won the Super Bowl a record six times",
    ],
}
dataset = Dataset.from_dict(data_samples)
score = evaluate(dataset, metrics=[answer_correctness])
score.to_pandas()
