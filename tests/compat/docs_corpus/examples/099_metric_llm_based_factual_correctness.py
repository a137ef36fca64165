# ruff: noqa
# Docs: Overview of Metrics > Different types of metrics > LLM-based metrics
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluation_llm (the docs leave it to the reader)
from assay.llms import llm_factory  # filled in

evaluation_llm = llm_factory("gpt-4o")  # filled in

from assay.metrics import FactualCorrectness

scorer = FactualCorrectness(llm=evaluation_llm)
