# ruff: noqa
# Docs: Quick Start > Customize Your LLM Provider (Google, Option 1: Google's Official Library)
# Changes:
#   - ragas -> assay in imports
#   - filled in: `import os` (the snippet of evals.py uses os without the import)
# corpus: requires google.generativeai
import os  # filled in: evals.py imports os

import google.generativeai as genai
from assay.llms import llm_factory

genai.configure(api_key=os.environ.get("GOOGLE_API_KEY"))
client = genai.GenerativeModel("gemini-2.0-flash")
llm = llm_factory("gemini-2.0-flash", provider="google", client=client)
# Adapter is auto-detected as "litellm" for google provider
