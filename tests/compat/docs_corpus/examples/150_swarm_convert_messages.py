# ruff: noqa
# Docs: Swarm > Converting Swarm Messages to Ragas Messages for evaluation, Tool Call Accuracy
# Changes:
#   - ragas -> assay in imports
#   - filled in: shipment_update_interaction, the Swarm message dicts of the page's demo run
#     (rebuilt from its printed conversion; the demo itself is interactive)
#   - the page's `pprint` / `langchain_openai` imports of that cell are unused there and left out
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-value 1.0
shipment_update_interaction = [  # filled in: the page's demo run
    {
        "role": "user",
        "content": "Hi I would like to would like to know where my order is with order number #3000?",
    },
    {
        "role": "assistant",
        "content": None,
        "sender": "Triage Agent",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "transfer_to_tracker_agent", "arguments": "{}"},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "tool_name": "transfer_to_tracker_agent",
        "content": '{"assistant": "Tracker Agent"}',
    },
    {
        "role": "assistant",
        "content": None,
        "sender": "Tracker Agent",
        "tool_calls": [
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "track_order", "arguments": '{"order_id":"3000"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_2",
        "tool_name": "track_order",
        "content": '{"order_id": "3000", "status": "In Transit", "estimated_delivery": "Jan 15, 2025"}',
    },
    {
        "role": "assistant",
        "content": "Woohoo! Your order #3000 is in transit and zooming its way to you! It's expected to make its grand arrival on January 15, 2025.",
        "sender": "Tracker Agent",
        "tool_calls": None,
    },
    {"role": "user", "content": "That will be all. Thank you!"},
    {
        "role": "assistant",
        "content": None,
        "sender": "Tracker Agent",
        "tool_calls": [
            {
                "id": "call_3",
                "type": "function",
                "function": {"name": "case_resolved", "arguments": "{}"},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_3",
        "tool_name": "case_resolved",
        "content": "Case resolved. No further questions.",
    },
    {
        "role": "assistant",
        "content": "You're welcome! Your case is all wrapped up, and I'm thrilled to have helped. Have a fantastic day!",
        "sender": "Tracker Agent",
        "tool_calls": None,
    },
]

from assay.integrations.swarm import convert_to_ragas_messages

# Assuming 'result["messages"]' contains the list of LangChain messages
shipment_update_ragas_trace = convert_to_ragas_messages(messages=shipment_update_interaction)
shipment_update_ragas_trace

from assay.messages import ToolCall
from assay.metrics import ToolCallAccuracy
from assay.dataset_schema import MultiTurnSample

sample = MultiTurnSample(
    user_input=shipment_update_ragas_trace,
    reference_tool_calls=[
        ToolCall(name="transfer_to_tracker_agent", args={}),
        ToolCall(name="track_order", args={"order_id": "3000"}),
        ToolCall(name="case_resolved", args={}),
    ],
)

tool_accuracy_scorer = ToolCallAccuracy()
await tool_accuracy_scorer.multi_turn_ascore(sample)
