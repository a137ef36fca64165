"""A LlamaIndex FunctionAgent that keeps a shopping list with three tools.

`run_agent(llm, request, items)` runs it on one request, starting from `items`, and returns its
reply, the list it left, and the conversation as assay messages (with the tool calls it made,
from the agent's events), which is what the agent metrics read.
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent

from assay.integrations.llama_index import convert_to_ragas_messages

SYSTEM = (
    "You manage the user's shopping list with the tools add_item, remove_item and list_items. "
    "Change the list only as the user asks. When a request is ambiguous (two items match), look "
    "at the list and ask which one they mean instead of guessing. Reply in one short sentence."
)


def make_agent(llm, items: list[str]) -> FunctionAgent:
    """The agent, over its own list (`items` is changed in place)."""

    def add_item(item: str) -> str:
        """Add an item to the shopping list."""
        if item in items:
            return f"{item} is already on the list"
        items.append(item)
        return f"added {item}"

    def remove_item(item: str) -> str:
        """Remove an item from the shopping list."""
        if item not in items:
            return f"{item} is not on the list"
        items.remove(item)
        return f"removed {item}"

    def list_items() -> str:
        """List the items on the shopping list."""
        return ", ".join(items) or "the list is empty"

    return FunctionAgent(
        name="list_manager",
        tools=[add_item, remove_item, list_items],
        llm=llm,
        system_prompt=SYSTEM,
        streaming=False,
    )


async def run_agent(llm, request: str, items: list[str]) -> dict:
    """{"response": str, "items": the list afterwards, "trace": [HumanMessage, AIMessage, ...]}."""
    items = list(items)
    handler = make_agent(llm, items).run(user_msg=request)
    events = [event async for event in handler.stream_events()]
    result = await handler
    return {
        "response": str(result.response.content or ""),
        "items": items,
        # AgentInput, AgentOutput (with its tool calls) and ToolCallResult events as messages
        "trace": convert_to_ragas_messages(events),
    }
