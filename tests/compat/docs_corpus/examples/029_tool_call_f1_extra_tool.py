# ruff: noqa
# Docs: Agentic or Tool use > Tool Call F1 > Example: Extra Tool Called
# Changes:
#   - ragas -> assay in imports
#   - filled in: the imports and `metric = ToolCallF1()` of the page's previous cell
#   - top-level await: run by the corpus runner as a notebook cell
# Note: the docs print "F1 Score: 0.67" but their own numbers (P=2/3, R=1) give F1 = 0.8, so no
#       value is asserted here.
from assay.metrics.collections import ToolCallF1  # filled in: previous cell
from assay.messages import HumanMessage, AIMessage, ToolCall  # filled in: previous cell

metric = ToolCallF1()  # filled in: previous cell

user_input = [
    HumanMessage(content="What's the weather like in Paris today?"),
    AIMessage(
        content="Let me check that for you.",
        tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})],
    ),
    HumanMessage(content="And the UV index?"),
    AIMessage(
        content="Sure, here's the UV index and air quality for Paris.",
        tool_calls=[
            ToolCall(name="uv_index_lookup", args={"location": "Paris"}),
            ToolCall(name="air_quality", args={"location": "Paris"}),  # extra call
        ],
    ),
]

reference_tool_calls = [
    ToolCall(name="weather_check", args={"location": "Paris"}),
    ToolCall(name="uv_index_lookup", args={"location": "Paris"}),
]

result = await metric.ascore(
    user_input=user_input,
    reference_tool_calls=reference_tool_calls,
)
print(f"F1 Score: {result.value}")
