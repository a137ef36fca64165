# ruff: noqa
# Docs: Context Precision > Examples > Context Utilization
# Changes:
#   - ragas -> assay in imports
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI
from assay.llms import llm_factory
from assay.metrics.collections import ContextUtilization

# Setup LLM
client = AsyncOpenAI()
llm = llm_factory("gpt-4o-mini", client=client)

# Create metric
scorer = ContextUtilization(llm=llm)

# Evaluate
result = await scorer.ascore(
    user_input="Where is the Eiffel Tower located?",
    response="The Eiffel Tower is located in Paris.",
    retrieved_contexts=[
        "The Eiffel Tower is located in Paris.",
        "The Brandenburg Gate is located in Berlin.",
    ],
)
print(f"Context Utilization Score: {result.value}")
