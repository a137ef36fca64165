# ruff: noqa
# Docs: AG-UI > Working directly with AG-UI events (events, snapshot and extraction helpers cells)
# Changes:
#   - ragas -> assay in imports
# corpus: docs-bug ValidationError: timestamp -- ag-ui-protocol's events take an integer timestamp; the docs pass an ISO string, which ag_ui.core itself refuses
from assay.integrations.ag_ui import convert_to_ragas_messages
from ag_ui.core import TextMessageChunkEvent

events = [
    TextMessageChunkEvent(
        message_id="assistant-1",
        role="assistant",
        delta="Hello from AG-UI!",
        timestamp="2024-12-01T00:00:00Z",
    )
]

ragas_messages = convert_to_ragas_messages(events, metadata=True)

from assay.integrations.ag_ui import convert_messages_snapshot
from ag_ui.core import MessagesSnapshotEvent, UserMessage, AssistantMessage

snapshot = MessagesSnapshotEvent(
    messages=[
        UserMessage(id="msg-1", content="Hello?"),
        AssistantMessage(id="msg-2", content="Hi! How can I help you today?"),
    ]
)

ragas_messages = convert_messages_snapshot(snapshot)

from assay.integrations.ag_ui import (
    extract_response,  # Get concatenated AI response text
    extract_tool_calls,  # Get all tool calls from AI messages
    extract_contexts,  # Get tool results/contexts
)

messages = convert_to_ragas_messages(events)
response = extract_response(messages)  # "Hello! The weather is sunny."
tool_calls = extract_tool_calls(messages)  # [ToolCall(name="get_weather", args={"location": "SF"})]
contexts = extract_contexts(messages)  # ["Sunny, 72F in San Francisco"]
