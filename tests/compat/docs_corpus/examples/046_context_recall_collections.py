# ruff: noqa
# Docs: Context Recall > LLM Based Context Recall > Example
# Changes:
#   - ragas -> assay in imports
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI
from assay.llms import llm_factory
from assay.metrics.collections import ContextRecall

# Setup LLM
client = AsyncOpenAI()
llm = llm_factory("gpt-4o-mini", client=client)

# Create metric
scorer = ContextRecall(llm=llm)

# Evaluate
result = await scorer.ascore(
    user_input="Where is the Eiffel Tower located?",
    retrieved_contexts=["Paris is the capital of France."],
    reference="The Eiffel Tower is located in Paris.",
)
print(f"Context Recall Score: {result.value}")
