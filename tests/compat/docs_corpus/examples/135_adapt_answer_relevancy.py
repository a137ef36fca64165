# ruff: noqa
# Docs: Adapting Metrics to Target Language > Adapting Other Metrics
# Changes:
#   - ragas -> assay in imports
#   - filled in: client and llm of the page's Setup cell
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI  # filled in: Setup cell
from assay.llms import llm_factory  # filled in: Setup cell

client = AsyncOpenAI()  # filled in: Setup cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: Setup cell

from assay.metrics.collections import AnswerRelevancy
from assay.embeddings.base import embedding_factory

embeddings = embedding_factory("openai", client=client)
relevancy = AnswerRelevancy(llm=llm, embeddings=embeddings)

# Adapt the prompt
relevancy.prompt = await relevancy.prompt.adapt(target_language="spanish", llm=llm)

# See translated example
print(relevancy.prompt.examples[0][0].response)
# Albert Einstein nació en Alemania.
