"""A calculator agent: an LLM that solves arithmetic by calling tools, one operation per step.

Each turn the model answers with JSON: a tool call (`add`, `subtract`, `multiply`, `divide`) or its
final answer. The agent runs the tool, tells the model the result and asks again, at most
`max_steps` times. It returns the answer and the whole conversation as assay messages, so tool-call
metrics can check which calls were made.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from assay import AIMessage, HumanMessage, ToolCall, ToolMessage

TOOLS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}

SYSTEM = (
    "You are a calculator agent. Work out the user's arithmetic expression with the tools "
    "add(a, b), subtract(a, b), multiply(a, b) and divide(a, b), one operation per turn, respecting "
    "parentheses and the usual order of operations. Never compute anything yourself. Reply with JSON "
    'only: {"thought": ..., "tool_call": {"name": ..., "a": ..., "b": ...}, "final_answer": null} to '
    'call a tool, or {"thought": ..., "tool_call": null, "final_answer": <number>} once the last tool '
    "result is the value of the whole expression."
)


class ToolRequest(BaseModel):
    name: Literal["add", "subtract", "multiply", "divide"]
    a: float
    b: float


class Step(BaseModel):
    thought: str
    tool_call: ToolRequest | None = None
    final_answer: float | None = None


class AgentError(RuntimeError):
    pass


def _plain(number: float) -> int | float:
    """2.0 -> 2, so that calls compare equal to the reference's integers."""
    return int(number) if float(number).is_integer() else number


class CalculatorAgent:
    def __init__(self, llm, max_steps: int = 8) -> None:
        self.llm = llm
        self.max_steps = max_steps

    async def solve(self, expression: str) -> dict:
        """{"answer": number, "trace": [HumanMessage, AIMessage(tool_calls), ToolMessage, ..., AIMessage]}."""
        chat = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Expression: {expression}"},
        ]
        trace: list = [HumanMessage(content=expression)]
        for _ in range(self.max_steps):
            step: Step = (await self.llm.agenerate(chat, schema=Step)).parsed
            chat.append({"role": "assistant", "content": step.model_dump_json()})
            if step.tool_call is not None:
                call = step.tool_call
                args = {"a": _plain(call.a), "b": _plain(call.b)}
                trace.append(
                    AIMessage(
                        content=step.thought, tool_calls=[ToolCall(name=call.name, args=args)]
                    )
                )
                try:
                    result = str(_plain(TOOLS[call.name](call.a, call.b)))
                except ZeroDivisionError:
                    result = "error: division by zero"
                trace.append(ToolMessage(content=result))
                chat.append(
                    {
                        "role": "user",
                        "content": f"Tool result: {call.name}({args['a']}, {args['b']}) = {result}",
                    }
                )
            elif step.final_answer is not None:
                trace.append(AIMessage(content=str(_plain(step.final_answer))))
                return {"answer": _plain(step.final_answer), "trace": trace}
            else:
                chat.append(
                    {"role": "user", "content": "Call a tool or give the final answer, as JSON."}
                )
        raise AgentError(
            f"no final answer after {self.max_steps} steps; last turn: {json.dumps(chat[-1])}"
        )
