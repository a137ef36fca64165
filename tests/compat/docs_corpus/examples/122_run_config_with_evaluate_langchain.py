# ruff: noqa
# Docs: Customize Timeouts and Rate Limits > Legacy: RunConfig > Usage with Evaluate
# Changes:
#   - ragas -> assay in imports
#   - filled in: eval_dataset (the docs leave it to the reader)
#   - model: ChatOpenAI reaches the loopback server via OPENAI_BASE_URL
# corpus: requires langchain_openai
# corpus: calls-model
from langchain_openai import ChatOpenAI
from assay.llms import LangchainLLMWrapper
from assay import EvaluationDataset, SingleTurnSample, evaluate
from assay.metrics import Faithfulness
from assay.run_config import RunConfig

eval_dataset = EvaluationDataset(  # filled in
    samples=[
        SingleTurnSample(
            user_input="When was the first super bowl?",
            response="The first superbowl was held on Jan 15, 1967",
            retrieved_contexts=[
                "The First AFL–NFL World Championship Game was played on January 15, 1967."
            ],
        )
    ]
)

# Legacy LLM setup
llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o"))

# Configure run settings
run_config = RunConfig(max_workers=64, timeout=60)

# Use with evaluate
results = evaluate(
    dataset=eval_dataset,
    metrics=[Faithfulness(llm=llm)],
    run_config=run_config,
)
