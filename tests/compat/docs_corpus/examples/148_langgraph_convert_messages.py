# ruff: noqa
# Docs: LangGraph > Converting Messages to Ragas Evaluation Format (two cells)
# Changes:
#   - ragas -> assay in imports
#   - filled in: result["messages"], the LangChain messages the page's agent run returned (its
#     printed output, rebuilt with langchain_core; the agent itself needs langgraph and a network)
# corpus: expect-repr [HumanMessage(content='What is the price of copper?', metadata=None, type='human'), AIMessage(content='', metadata=None, type='ai', tool_calls=[ToolCall(name='get_metal_price', args={'metal_name': 'copper'})]), ToolMessage(content='0.0098', metadata=None, type='tool'), AIMessage(content='The price of copper is $0.0098 per gram.', metadata=None, type='ai', tool_calls=None)]
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # filled in

result = {  # filled in: the page's printed result["messages"]
    "messages": [
        HumanMessage(
            content="What is the price of copper?", id="4122f5d4-e298-49e8-a0e0-c98adda78c6c"
        ),
        AIMessage(
            content="",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "call_DkVQBK4UMgiXrpguUS2qC4mA",
                        "function": {
                            "arguments": '{"metal_name":"copper"}',
                            "name": "get_metal_price",
                        },
                        "type": "function",
                    }
                ]
            },
            response_metadata={
                "model_name": "gpt-4o-mini-2024-07-18",
                "finish_reason": "tool_calls",
            },
            id="run-0f77b156-e43e-4c1e-bd3a-307333eefb68-0",
            tool_calls=[
                {
                    "name": "get_metal_price",
                    "args": {"metal_name": "copper"},
                    "id": "call_DkVQBK4UMgiXrpguUS2qC4mA",
                    "type": "tool_call",
                }
            ],
            usage_metadata={"input_tokens": 116, "output_tokens": 18, "total_tokens": 134},
        ),
        ToolMessage(
            content="0.0098",
            name="get_metal_price",
            id="422c089a-6b76-4e48-952f-8925c3700ae3",
            tool_call_id="call_DkVQBK4UMgiXrpguUS2qC4mA",
        ),
        AIMessage(
            content="The price of copper is $0.0098 per gram.",
            response_metadata={"model_name": "gpt-4o-mini-2024-07-18", "finish_reason": "stop"},
            id="run-67cbf98b-4fa6-431e-9ce4-58697a76c36e-0",
            usage_metadata={"input_tokens": 148, "output_tokens": 14, "total_tokens": 162},
        ),
    ]
}

from assay.integrations.langgraph import convert_to_ragas_messages

# Assuming 'result["messages"]' contains the list of LangChain messages
ragas_trace = convert_to_ragas_messages(result["messages"])

ragas_trace  # List of Ragas messages
