# ruff: noqa
# Docs: Aligning LLM Evaluators with Human Judgment > Ragas metrics (AspectCritic, preview its prompt)
# Changes:
#   - ragas -> assay in imports
#   - filled in: evaluator_llm (the page builds it with langchain_google_vertexai; here llm_factory)
# corpus: expect-eval helpfulness_critic.get_prompts()['single_turn_aspect_critic_prompt'].instruction==helpfulness_critic.judge_prompt('aspect_critic').instruction True
#   (the docs print Ragas' instruction; assay's prompts are worded its own way, and the criterion
#   goes in as an input, not into the instruction)
from assay.llms import llm_factory  # filled in

evaluator_llm = llm_factory("gpt-4o-mini")  # filled in

from assay.metrics import AspectCritic

helpfulness_critic = AspectCritic(
    name="helpfulness",
    definition="Evaluate how helpful the assistant's response is to the user's query.",
    llm=evaluator_llm,
)

print(helpfulness_critic.get_prompts()["single_turn_aspect_critic_prompt"].instruction)
