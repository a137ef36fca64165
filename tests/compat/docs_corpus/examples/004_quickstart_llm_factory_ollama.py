# ruff: noqa
# Docs: Quick Start > Choosing Your LLM Provider (Local Models with Ollama)
# Changes:
#   - ragas -> assay in imports (the model is only built, never called)
from assay.llms import llm_factory

llm = llm_factory(
    "mistral",
    provider="ollama",
    base_url="http://localhost:11434",  # Default Ollama URL
)
