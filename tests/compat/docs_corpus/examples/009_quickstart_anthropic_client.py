# ruff: noqa
# Docs: Quick Start > Customize Your LLM Provider (Anthropic client)
# Changes:
#   - ragas -> assay in imports
#   - filled in: `import os` (the snippet of evals.py uses os without the import)
#   - ANTHROPIC_API_KEY is set in the environment, as the docs instruct (no request is made)
import os  # filled in: evals.py imports os

from anthropic import Anthropic
from assay.llms import llm_factory

client = Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY"))
llm = llm_factory("claude-3-5-sonnet-20241022", provider="anthropic", client=client)
