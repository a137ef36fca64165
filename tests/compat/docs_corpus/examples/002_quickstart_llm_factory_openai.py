# ruff: noqa
# Docs: Quick Start > Choosing Your LLM Provider (OpenAI)
# Changes:
#   - ragas -> assay in imports
#   - model: OPENAI_API_KEY / OPENAI_BASE_URL from the environment (the loopback server)
from assay.llms import llm_factory

llm = llm_factory("gpt-4o")
