# ruff: noqa
# Docs: Agentic or Tool use > Tool call Accuracy > Example: Basic Usage
# Changes:
#   - ragas -> assay in imports
# corpus: expect-stdout Tool Call Accuracy: 1.0
import asyncio
from assay.metrics.collections import ToolCallAccuracy
from assay.messages import AIMessage, HumanMessage, ToolCall


async def evaluate_tool_call_accuracy():
    # Define the conversation with tool calls
    user_input = [
        HumanMessage(content="What's the weather like in New York right now?"),
        AIMessage(
            content="The current temperature in New York is 75°F and it's partly cloudy.",
            tool_calls=[ToolCall(name="weather_check", args={"location": "New York"})],
        ),
        HumanMessage(content="Can you translate that to Celsius?"),
        AIMessage(
            content="Let me convert that to Celsius for you.",
            tool_calls=[
                ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75})
            ],
        ),
    ]

    # Define expected tool calls
    reference_tool_calls = [
        ToolCall(name="weather_check", args={"location": "New York"}),
        ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75}),
    ]

    # Evaluate
    metric = ToolCallAccuracy()
    result = await metric.ascore(
        user_input=user_input,
        reference_tool_calls=reference_tool_calls,
    )
    print(f"Tool Call Accuracy: {result.value}")


if __name__ == "__main__":
    asyncio.run(evaluate_tool_call_accuracy())
