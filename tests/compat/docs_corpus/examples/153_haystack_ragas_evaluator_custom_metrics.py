# ruff: noqa
# Docs: Haystack > Advance Usage (custom Ragas metrics in RagasEvaluator)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the page's RagasEvaluator import and evaluator_llm (built there with
#     langchain_openai's ChatOpenAI, which reaches the loopback server via OPENAI_BASE_URL)
# corpus: requires langchain_openai
# corpus: calls-model
from haystack_integrations.components.evaluators.ragas import (
    RagasEvaluator,
)  # filled in: the page's import
from langchain_openai import ChatOpenAI  # filled in: the page's earlier cell
from assay.llms import LangchainLLMWrapper  # filled in: the page's earlier cell

llm = ChatOpenAI(model="gpt-4o-mini")  # filled in: the page's earlier cell
evaluator_llm = LangchainLLMWrapper(llm)  # filled in: the page's earlier cell

from assay.metrics import AspectCritic, RubricsScore

SportsRelevanceMetric = AspectCritic(
    name="sports_relevance_metric",
    definition="Were the question and response related to sports?",
    llm=evaluator_llm,
)

rubrics = {
    "score1_description": "The response does not answer the user input.",
    "score2_description": "The response partially answers the user input.",
    "score3_description": "The response fully answer the user input",
}

evaluator = RagasEvaluator(
    ragas_metrics=[
        SportsRelevanceMetric,
        RubricsScore(llm=evaluator_llm, rubrics=rubrics),
    ],
    evaluator_llm=evaluator_llm,
)

output = evaluator.run(
    query="Which is the most popular global sport?",
    documents=[
        "Football is undoubtedly the world's most popular sport with"
        " major events like the FIFA World Cup and sports personalities"
        " like Ronaldo and Messi, drawing a followership of more than 4"
        " billion people."
    ],
    response="Football is the most popular sport with around 4 billion followers worldwide",
)

output["result"]
