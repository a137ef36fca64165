# ruff: noqa
# Docs: Understand Cost and Usage of Operations > Token Usage for Evaluations (cells in order)
# Changes:
#   - ragas -> assay in imports
#   - filled in: eval_dataset, a small EvaluationDataset (the page loads vibrantlabsai/amnesty_qa
#     from the Hugging Face Hub, not reachable here); gpt4o from the page's previous cell
#   - model: ChatOpenAI reaches the loopback server via OPENAI_BASE_URL
# corpus: requires langchain_openai
# corpus: calls-model
from langchain_openai.chat_models import ChatOpenAI  # filled in: previous cell

gpt4o = ChatOpenAI(model="gpt-4o")  # filled in: previous cell

from assay import EvaluationDataset, SingleTurnSample

eval_dataset = EvaluationDataset(  # filled in
    samples=[
        SingleTurnSample(
            user_input="Where is the Eiffel Tower?",
            retrieved_contexts=["The Eiffel Tower is in Paris."],
            response="Paris.",
            reference="The Eiffel Tower is located in Paris.",
        )
    ]
)

from assay import evaluate
from assay.metrics import LLMContextRecall

from assay.cost import get_token_usage_for_openai

result = evaluate(
    eval_dataset,
    metrics=[LLMContextRecall()],
    llm=gpt4o,
    token_usage_parser=get_token_usage_for_openai,
)

result.total_tokens()

result.total_cost(cost_per_input_token=5 / 1e6, cost_per_output_token=15 / 1e6)
