# ruff: noqa
# Docs: Quick Start > Choosing Your LLM Provider (Google Gemini)
# Changes:
#   - ragas -> assay in imports
#   - GOOGLE_API_KEY is set in the environment, as the docs instruct (no request is made)
from assay.llms import llm_factory

llm = llm_factory("gemini-1.5-pro", provider="google")
