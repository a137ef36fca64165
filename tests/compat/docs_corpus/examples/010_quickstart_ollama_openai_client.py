# ruff: noqa
# Docs: Quick Start > Customize Your LLM Provider (Ollama through an OpenAI-compatible client)
# Changes:
#   - ragas -> assay in imports (the model is only built, never called)
from openai import OpenAI
from assay.llms import llm_factory

# Create an OpenAI-compatible client for Ollama
client = OpenAI(
    api_key="ollama",  # Ollama doesn't require a real key
    base_url="http://localhost:11434/v1",
)
llm = llm_factory("mistral", provider="openai", client=client)
