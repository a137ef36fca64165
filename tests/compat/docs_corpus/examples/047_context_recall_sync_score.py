# ruff: noqa
# Docs: Context Recall > LLM Based Context Recall > Synchronous Usage
# Changes:
#   - ragas -> assay in imports
#   - filled in: the setup of the page's previous cell (client, llm, scorer)
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from openai import AsyncOpenAI  # filled in: previous cell
from assay.llms import llm_factory  # filled in: previous cell
from assay.metrics.collections import ContextRecall  # filled in: previous cell

client = AsyncOpenAI()  # filled in: previous cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: previous cell
scorer = ContextRecall(llm=llm)  # filled in: previous cell

result = scorer.score(
    user_input="Where is the Eiffel Tower located?",
    retrieved_contexts=["Paris is the capital of France."],
    reference="The Eiffel Tower is located in Paris.",
)
