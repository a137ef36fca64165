# ruff: noqa
# Docs: Customize Models > System Prompts
# Changes:
#   - ragas -> assay in imports (the model is only built, never called)
from assay.llms import llm_factory
from openai import OpenAI

client = OpenAI(api_key="your-key")
llm = llm_factory(
    "gpt-4o",
    client=client,
    system_prompt="You are a helpful assistant that evaluates RAG systems.",
)
