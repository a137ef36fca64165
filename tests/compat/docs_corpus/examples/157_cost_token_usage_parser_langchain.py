# ruff: noqa
# Docs: Understand Cost and Usage of Operations > Understanding TokenUsageParser
# Changes:
#   - ragas -> assay in imports
#   - model: ChatOpenAI reaches the loopback server via OPENAI_BASE_URL
# corpus: requires langchain_openai
# corpus: calls-model
from langchain_openai.chat_models import ChatOpenAI
from langchain_core.prompt_values import StringPromptValue

gpt4o = ChatOpenAI(model="gpt-4o")
p = StringPromptValue(text="hai there")
llm_result = gpt4o.generate_prompt([p])

# lets import a parser for OpenAI
from assay.cost import get_token_usage_for_openai

get_token_usage_for_openai(llm_result)
