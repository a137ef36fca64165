# ruff: noqa
# Docs: Agentic or Tool use > Tool call Accuracy > Example: Flexible Order Mode
# Changes:
#   - ragas -> assay in imports
#   - filled in: the imports of the page's previous cell (the snippet continues it)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: expect-stdout Score: 1.0
from assay.metrics.collections import ToolCallAccuracy  # filled in: previous cell
from assay.messages import AIMessage, HumanMessage, ToolCall  # filled in: previous cell

# Enable flexible order mode
metric = ToolCallAccuracy(strict_order=False)

user_input = [
    HumanMessage(content="Get weather for Paris and London"),
    AIMessage(
        content="Fetching weather data...",
        tool_calls=[
            ToolCall(name="weather_check", args={"location": "London"}),
            ToolCall(name="weather_check", args={"location": "Paris"}),
        ],
    ),
]

reference_tool_calls = [
    ToolCall(name="weather_check", args={"location": "Paris"}),
    ToolCall(name="weather_check", args={"location": "London"}),
]

result = await metric.ascore(
    user_input=user_input,
    reference_tool_calls=reference_tool_calls,
)
print(f"Score: {result.value}")  # 1.0 (order doesn't matter)
