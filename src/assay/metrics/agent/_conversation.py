"""A conversation as plain text for a judge, tool calls included."""

from __future__ import annotations

import json

from assay.schema.messages import AIMessage, HumanMessage, ToolMessage


def conversation_text(messages: list[HumanMessage | AIMessage | ToolMessage]) -> str:
    lines = []
    for message in messages:
        if isinstance(message, HumanMessage):
            lines.append(f"Human: {message.content}")
        elif isinstance(message, ToolMessage):
            lines.append(f"ToolOutput: {message.content}")
        else:
            if message.content:
                lines.append(f"AI: {message.content}")
            for call in message.tool_calls or []:
                lines.append(
                    f"AI: [tool call] {call.name}({json.dumps(call.args, ensure_ascii=False)})"
                )
    return "\n".join(lines)
