# ruff: noqa
# Docs: Quick Start > Choosing Your LLM Provider (Custom / Other Providers)
# Changes:
#   - ragas -> assay in imports (the model is only built, never called)
from assay.llms import llm_factory

llm = llm_factory(
    "model-name",
    api_key="your-api-key",
    base_url="https://your-api-endpoint",
)
