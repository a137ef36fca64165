"""A small order-support agent with two tools, built on any model assay knows.

Each turn the model chooses one step (look an order up, change its delivery address, or just
reply); a chosen tool runs on the in-memory ORDERS below and the model then writes its reply from
the tool's output. The reply is a list of assay messages: the tool call, its output, then the
answer, which is what `assay.simulation.simulate` records and the agent metrics score.
"""

from __future__ import annotations

import json
import os
from typing import Literal

from pydantic import BaseModel

from assay import AIMessage, HumanMessage, ToolCall, ToolMessage

ORDERS = {
    "5521": {
        "item": "walking boots",
        "status": "shipped, arriving Thursday",
        "address": "4 Mill Lane",
    },
    "7310": {"item": "rain jacket", "status": "being packed", "address": "19 Quay Street"},
    "8802": {"item": "tent", "status": "delivered on Monday", "address": "2 Elm Road"},
}

INSTRUCTIONS = (
    "You are the support assistant of an outdoor shop. You can look up an order (order_status) or "
    "change the delivery address of an order that has not shipped yet (change_address). You cannot "
    "issue refunds or answer questions outside orders: say so politely. Ask for the order number "
    "when you need it and do not have it. Choose one step for the customer's latest message."
)


class Step(BaseModel):
    tool: Literal["order_status", "change_address", "reply"]
    order_id: str = ""
    new_address: str = ""
    reply: str = ""  # the answer when tool is "reply"


def order_status(order_id: str) -> dict:
    order = ORDERS.get(order_id.strip().lstrip("#"))
    return {"error": f"no order {order_id}"} if order is None else {"order": order_id, **order}


def change_address(order_id: str, new_address: str) -> dict:
    """Says what the change would be; ORDERS is left as it is, so conversations running at the
    same time each see the shop as it starts (a real tool would write to your order system)."""
    order = ORDERS.get(order_id.strip().lstrip("#"))
    if order is None:
        return {"error": f"no order {order_id}"}
    if order["status"].startswith(("shipped", "delivered")):
        return {"error": f"order {order_id} has already {order['status'].split(',')[0]}"}
    return {"order": order_id, "address": new_address, "changed": True}


def _transcript(messages: list) -> str:
    lines = []
    for message in messages:
        if isinstance(message, HumanMessage):
            lines.append(f"Customer: {message.content}")
        elif isinstance(message, AIMessage) and message.content:
            lines.append(f"Assistant: {message.content}")
        elif isinstance(message, ToolMessage):
            lines.append(f"Tool output: {message.content}")
    return "\n".join(lines)


class SupportAgent:
    """Call it with the conversation so far; it returns its turn as messages."""

    def __init__(self, llm):
        self.llm = llm

    async def __call__(self, messages: list) -> list:
        conversation = _transcript(messages)
        chosen = await self.llm.agenerate(
            [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": f"The conversation so far:\n{conversation}"},
            ],
            schema=Step,
        )
        step: Step = chosen.parsed
        if step.tool == "reply":
            return [AIMessage(content=step.reply or "How can I help with your order?")]
        if step.tool == "order_status":
            call = ToolCall(name="order_status", args={"order_id": step.order_id})
            output = order_status(step.order_id)
        else:
            args = {"order_id": step.order_id, "new_address": step.new_address}
            call = ToolCall(name="change_address", args=args)
            output = change_address(step.order_id, step.new_address)
        result = json.dumps(output)
        answer = await self.llm.agenerate(
            [
                {"role": "system", "content": INSTRUCTIONS},
                {
                    "role": "user",
                    "content": f"The conversation so far:\n{conversation}\n\nYou called "
                    f"{call.name}({json.dumps(call.args)}) and got: {result}\n"
                    "Write your reply to the customer, in one or two sentences.",
                },
            ],
            max_tokens=200,
        )
        return [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content=result),
            AIMessage(content=answer.text.strip() or "Done."),
        ]


_default: SupportAgent | None = None


async def support_agent(messages: list) -> list:
    """The agent on the default model (ASSAY_LLM, else the embedded one), built on first use:
    what `assay simulate evals/scenarios.jsonl --agent agent:support_agent` talks to."""
    global _default
    if _default is None:
        from assay.models import llm_factory

        _default = SupportAgent(llm_factory(os.environ.get("ASSAY_LLM") or "local", max_tokens=512))
    return await _default(messages)
