# ruff: noqa
# Docs: Agentic or Tool use > Tool Call F1 > Legacy API
# Changes:
#   - ragas -> assay in imports
#   - top-level await: run by the corpus runner as a notebook cell
from assay.metrics import ToolCallF1  # Legacy import
from assay.dataset_schema import MultiTurnSample
from assay.messages import HumanMessage, AIMessage, ToolCall

sample = MultiTurnSample(
    user_input=[
        HumanMessage(content="What's the weather like in Paris today?"),
        AIMessage(
            content="Let me check that for you.",
            tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})],
        ),
    ],
    reference_tool_calls=[
        ToolCall(name="weather_check", args={"location": "Paris"}),
    ],
)

scorer = ToolCallF1()
score = await scorer.multi_turn_ascore(sample)
