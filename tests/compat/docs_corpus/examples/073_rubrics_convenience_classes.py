# ruff: noqa
# Docs: Rubric-Based Evaluation > Convenience Classes
# Changes:
#   - ragas -> assay in imports
#   - filled in: the setup of the page's first cell (client, llm)
from openai import AsyncOpenAI  # filled in: first cell
from assay.llms.base import llm_factory  # filled in: first cell

client = AsyncOpenAI()  # filled in: first cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: first cell

from assay.metrics.collections import (
    RubricsScoreWithoutReference,
    RubricsScoreWithReference,
)

# Reference-free
metric_no_ref = RubricsScoreWithoutReference(llm=llm)

# Reference-based
metric_with_ref = RubricsScoreWithReference(llm=llm)
