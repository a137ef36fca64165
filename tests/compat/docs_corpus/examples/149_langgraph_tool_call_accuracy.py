# ruff: noqa
# Docs: LangGraph > Evaluating the Agent's Performance > Tool Call Accuracy
# Changes:
#   - ragas -> assay in imports
#   - filled in: result["messages"], the LangChain messages of the page's agent run (its printed
#     output, rebuilt with langchain_core)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 1.0
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # filled in

result = {  # filled in: the page's printed result["messages"]
    "messages": [
        HumanMessage(content="What is the price of copper?"),
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": "get_metal_price",
                    "args": {"metal_name": "copper"},
                    "id": "call_1",
                    "type": "tool_call",
                }
            ],
        ),
        ToolMessage(content="0.0098", name="get_metal_price", tool_call_id="call_1"),
        AIMessage(content="The price of copper is $0.0098 per gram."),
    ]
}

from assay.metrics import ToolCallAccuracy
from assay.dataset_schema import MultiTurnSample
from assay.integrations.langgraph import convert_to_ragas_messages
import assay.messages as r

ragas_trace = convert_to_ragas_messages(
    messages=result["messages"]
)  # List of Ragas messages converted using the Ragas function

sample = MultiTurnSample(
    user_input=ragas_trace,
    reference_tool_calls=[r.ToolCall(name="get_metal_price", args={"metal_name": "copper"})],
)

tool_accuracy_scorer = ToolCallAccuracy()
await tool_accuracy_scorer.multi_turn_ascore(sample)
