# ruff: noqa
# Docs: Quick Start > Choosing Your LLM Provider (Anthropic)
# Changes:
#   - ragas -> assay in imports
#   - ANTHROPIC_API_KEY is set in the environment, as the docs instruct (no request is made)
from assay.llms import llm_factory

llm = llm_factory("claude-3-5-sonnet-20241022", provider="anthropic")
