# ruff: noqa
# Docs: Agentic or Tool use > Tool Call F1 > Example: Basic Usage
# Changes:
#   - ragas -> assay in imports
# corpus: expect-stdout Tool Call F1: 1.0
import asyncio
from assay.metrics.collections import ToolCallF1
from assay.messages import HumanMessage, AIMessage, ToolCall


async def evaluate_tool_call_f1():
    # Define the conversation with tool calls
    user_input = [
        HumanMessage(content="What's the weather like in Paris today?"),
        AIMessage(
            content="Let me check that for you.",
            tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})],
        ),
        HumanMessage(content="And the UV index?"),
        AIMessage(
            content="Sure, here's the UV index for Paris.",
            tool_calls=[ToolCall(name="uv_index_lookup", args={"location": "Paris"})],
        ),
    ]

    # Define expected tool calls
    reference_tool_calls = [
        ToolCall(name="weather_check", args={"location": "Paris"}),
        ToolCall(name="uv_index_lookup", args={"location": "Paris"}),
    ]

    # Evaluate
    metric = ToolCallF1()
    result = await metric.ascore(
        user_input=user_input,
        reference_tool_calls=reference_tool_calls,
    )
    print(f"Tool Call F1: {result.value}")


if __name__ == "__main__":
    asyncio.run(evaluate_tool_call_f1())
