"""Scripted stand-ins for a simulation's two models, answering from what each request shows.

The user model and the judge are assay `LLM`s over a `ScriptedProvider` whose one answer is a
function of the request: it reads the scenario's goal and the conversation from the fenced inputs
of the rendered prompt, so several conversations can run at once and each still gets its own
script (the order in which concurrent calls arrive does not matter).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from assay.models.llm import LLM
from assay.models.providers.scripted import ScriptedProvider
from assay.models.types import ModelRequest


def fenced(request: ModelRequest, name: str) -> str:
    """The text of the last `<name>` input of the request's last message."""
    text = str(request.messages[-1].content)
    found = re.findall(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found[-1] if found else ""


def say(message: str, reason: str = "scripted") -> str:
    return json.dumps({"action": "continue", "message": message, "reason": reason})


def stop(reason: str = "it cannot help me") -> str:
    return json.dumps({"action": "stop", "message": "", "reason": reason})


def verdict(met: bool, reason: str = "scripted verdict") -> str:
    return json.dumps({"reason": reason, "goal_met": met})


def user_turns(request: ModelRequest) -> int:
    """How many messages the user has sent so far, as the user's prompt shows them."""
    return fenced(request, "conversation").count("User: ")


def scripted_user(scripts: dict[str, list[str]]) -> tuple[LLM, ScriptedProvider]:
    """A user model: for the scenario whose goal is the key, its n-th answer in the list (the
    last one repeats)."""

    def answer(request: ModelRequest) -> str:
        script = scripts[fenced(request, "goal")]
        return script[min(user_turns(request), len(script) - 1)]

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


def scripted_judge(decide: Callable[[str, str], bool]) -> tuple[LLM, ScriptedProvider]:
    """A judge: `decide(goal, conversation_text)` says whether the goal is met."""

    def answer(request: ModelRequest) -> str:
        goal, conversation = fenced(request, "goal"), fenced(request, "conversation")
        met = decide(goal, conversation)
        return verdict(met, "the booking is confirmed" if met else "not yet")

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider
