# ruff: noqa
# Docs: Quick Start > Customize Your LLM Provider (any OpenAI-compatible API)
# Changes:
#   - ragas -> assay in imports (the model is only built, never called)
from openai import OpenAI
from assay.llms import llm_factory

client = OpenAI(
    api_key="your-api-key",
    base_url="https://your-api-endpoint",
)
llm = llm_factory("model-name", provider="openai", client=client)
