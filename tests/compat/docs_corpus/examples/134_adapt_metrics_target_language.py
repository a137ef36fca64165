# ruff: noqa
# Docs: Adapting Metrics to Target Language > Setup, Adapt Prompts to Target Language,
#       Evaluate with Adapted Metric (the page's cells in order)
# Changes:
#   - ragas -> assay in imports
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
# corpus: expect-stdout english
# corpus: expect-stdout hindi
from openai import AsyncOpenAI
from assay.llms import llm_factory
from assay.metrics.collections import Faithfulness

client = AsyncOpenAI()
llm = llm_factory("gpt-4o-mini", client=client)
metric = Faithfulness(llm=llm)

# Check original language
print(metric.statement_generator_prompt.language)  # english

# Adapt prompts to Hindi
metric.statement_generator_prompt = await metric.statement_generator_prompt.adapt(
    target_language="hindi", llm=llm
)
metric.nli_statement_prompt = await metric.nli_statement_prompt.adapt(
    target_language="hindi", llm=llm
)

# Verify adaptation
print(metric.statement_generator_prompt.language)  # hindi

# See translated example
print(metric.statement_generator_prompt.examples[0][0].question)

result = await metric.ascore(
    user_input="भारत की राजधानी क्या है?",
    response="भारत की राजधानी नई दिल्ली है।",
    retrieved_contexts=["भारत की राजधानी नई दिल्ली है, जो देश का सबसे बड़ा शहर भी है।"],
)
print(f"Faithfulness: {result.value}")  # Faithfulness: 1.0
