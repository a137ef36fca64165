# ruff: noqa
# Docs: Modifying prompts in metrics > Adapting prompts to different languages
# Changes:
#   - ragas -> assay in imports
#   - filled in: client and llm of the page's first cell
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI  # filled in: first cell
from assay.llms import llm_factory  # filled in: first cell

client = AsyncOpenAI()  # filled in: first cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: first cell

from assay.metrics.collections import Faithfulness

scorer = Faithfulness(llm=llm)

# Adapt the statement generator prompt to Spanish
adapted_prompt = await scorer.statement_generator_prompt.adapt(
    target_language="spanish",
    llm=llm,
    adapt_instruction=False,  # Keep instruction in English, only translate examples
)

# Replace the prompt with the adapted version
scorer.statement_generator_prompt = adapted_prompt

# Now use the metric with Spanish examples
result = await scorer.ascore(
    user_input="¿Dónde nació Einstein?",
    response="Einstein nació en Alemania.",
    retrieved_contexts=["Albert Einstein nació en Alemania..."],
)
