# ruff: noqa
# Docs: Agentic or Tool use > Topic Adherence > Legacy API
# Changes:
#   - ragas -> assay in imports
#   - model: ChatOpenAI reaches the loopback server via OPENAI_BASE_URL
#   - filled in: user_input=[...] with the conversation of the page's example
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: requires langchain_openai
# corpus: calls-model
from assay.dataset_schema import MultiTurnSample
from assay.messages import HumanMessage, AIMessage, ToolMessage, ToolCall
from assay.metrics import TopicAdherenceScore  # Legacy import
from assay.llms import LangchainLLMWrapper
from langchain_openai import ChatOpenAI

evaluator_llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o"))

sample = MultiTurnSample(
    user_input=[  # filled in: the conversation of the page's example (shortened)
        HumanMessage(
            content="Can you provide me with details about Einstein's theory of relativity?"
        ),
        AIMessage(
            content="Sure, let me retrieve the relevant information for you.",
            tool_calls=[
                ToolCall(name="document_search", args={"query": "Einstein's theory of relativity"})
            ],
        ),
        ToolMessage(
            content="Found relevant documents: 1. Relativity: The Special and the General Theory."
        ),
        AIMessage(content="I found a document on Einstein's theory of relativity."),
    ],  # conversation messages
    reference_topics=["science"],
)

scorer = TopicAdherenceScore(llm=evaluator_llm, mode="precision")
score = await scorer.multi_turn_ascore(sample)
