# ruff: noqa
# Docs: Agentic or Tool use > Agent Goal Accuracy > Legacy API (Deprecated)
# Changes:
#   - ragas -> assay in imports
#   - model: ChatOpenAI reaches the loopback server via OPENAI_BASE_URL
#   - filled in: user_input=[...] with the conversation of the page's example
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: requires langchain_openai
# corpus: calls-model
from assay.dataset_schema import MultiTurnSample
from assay.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.metrics import AgentGoalAccuracyWithReference  # Legacy import
from assay.llms import LangchainLLMWrapper
from langchain_openai import ChatOpenAI

evaluator_llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o"))

sample = MultiTurnSample(
    user_input=[  # filled in: the conversation of the page's example
        HumanMessage(content="Hey, book a table at the nearest best Chinese restaurant for 8:00pm"),
        AIMessage(
            content="Great choice! I'll book a table for 8:00pm at Golden Dragon.",
            tool_calls=[
                ToolCall(name="restaurant_book", args={"name": "Golden Dragon", "time": "8:00pm"})
            ],
        ),
        ToolMessage(content="Table booked at Golden Dragon for 8:00pm."),
        AIMessage(content="Your table at Golden Dragon is booked for 8:00pm. Enjoy your meal!"),
    ],  # conversation messages
    reference="Table booked at one of the chinese restaurants at 8 pm",
)

scorer = AgentGoalAccuracyWithReference(llm=evaluator_llm)
score = await scorer.multi_turn_ascore(sample)
