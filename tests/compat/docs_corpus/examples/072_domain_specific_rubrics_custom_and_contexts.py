# ruff: noqa
# Docs: Rubric-Based Evaluation > Custom Rubrics, With Retrieved Contexts (two cells)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the setup of the page's first cell (client, llm)
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
# corpus: differs UsageError: needs reference -- with_reference=True makes reference a required field in assay; Ragas formats a missing reference into the prompt as "None"
from openai import AsyncOpenAI  # filled in: first cell
from assay.llms.base import llm_factory  # filled in: first cell

client = AsyncOpenAI()  # filled in: first cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: first cell

from assay.metrics.collections import DomainSpecificRubrics

my_custom_rubrics = {
    "score1_description": "Answer and ground truth are completely different",
    "score2_description": "Answer and ground truth are somewhat different",
    "score3_description": "Answer and ground truth are somewhat similar",
    "score4_description": "Answer and ground truth are similar",
    "score5_description": "Answer and ground truth are exactly the same",
}

metric = DomainSpecificRubrics(llm=llm, rubrics=my_custom_rubrics, with_reference=True)

result = await metric.ascore(
    user_input="What's the longest river in the world?",
    response="Based on the context, the Nile is the longest river.",
    retrieved_contexts=[
        "Scientists debate whether the Amazon or the Nile is the longest river.",
        "The Nile River was central to Ancient Egyptians' wealth and power.",
    ],
)
