"""The tools an agent calls during a replay: answered from the recording, else a `ReplayMiss`.

A recorded trajectory's tool outputs are keyed by (tool name, canonical JSON of the arguments);
repeated identical calls are answered in the order they were recorded, and once those run out the
last answer is given again (`repeat_last=False` makes that a miss). A call the recording does not
hold raises `ReplayMiss` naming the tool and the arguments, unless `on_miss="live"` and a live
function was given for that tool: then the live function runs and its result is what the agent
gets (the result notes that it went live).

The agent gets a `ReplayTools`, a mapping from tool name to a function taking the arguments as
keywords: `tools["get_weather"](city="Paris")`, or `tools.call("get_weather", {"city": "Paris"})`,
or, from async code, `await tools.acall("get_weather", {"city": "Paris"})`. Results are the text
the recording holds (a structured result as its JSON text), as an LLM would be shown it.
"""

from __future__ import annotations

import collections
import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio.from_thread
import anyio.to_thread

from assay.errors import AssayError, UsageError
from assay.integrations.trajectory.chat import as_text
from assay.integrations.trajectory.merge import canonical_args
from assay.schema.messages import AIMessage, ToolCall, ToolMessage
from assay.schema.samples import MultiTurnSample
from assay.simulation.errors import AgentLooped

OnMiss = Literal["raise", "live"]


class ReplayMiss(AssayError, LookupError):
    """The agent called a tool with arguments the recording holds no answer for: `tool` names
    it, `arguments` are the call's, `recorded` the arguments the recording holds for that tool."""

    def __init__(
        self,
        tool: str,
        args: dict[str, Any],
        recorded: list[dict[str, Any]],
        *,
        answered: int = 0,
    ) -> None:
        self.tool = tool
        self.arguments = dict(args)
        self.recorded = recorded
        shown = canonical_args(args)
        if answered:  # the same call, more often than recorded (repeat_last=False)
            held = f"it holds {answered} answer(s) of this call, all given already"
        elif recorded:
            known = "; ".join(canonical_args(a) for a in recorded[:3])
            more = f" and {len(recorded) - 3} more" if len(recorded) > 3 else ""
            held = f"it holds {tool} with {known}{more}"
        else:
            held = f"it holds no call of {tool}"
        super().__init__(f"{tool}({shown}) is not in the recording ({held})")


@dataclass
class ToolUse:
    """One call the agent made during the replay, and where its answer came from."""

    call: ToolCall
    output: str | None
    source: Literal["recording", "live", "miss"]
    miss: ReplayMiss | None = None  # for a miss: what was raised


def recorded_outputs(sample: MultiTurnSample) -> dict[tuple[str, str], list[str]]:
    """Each (tool, canonical arguments) of the trajectory with its outputs in order; a call whose
    output is not in the trajectory has none."""
    found: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    messages = sample.user_input
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        outputs = []
        for following in messages[index + 1 :]:
            if not isinstance(following, ToolMessage):
                break
            outputs.append(following.content)
        for call, output in zip(message.tool_calls, outputs, strict=False):
            found[(call.name, canonical_args(call.args))].append(output)
    return dict(found)


class ReplayTools(Mapping[str, Callable[..., str]]):
    """The tool registry of one replay (see the module docstring)."""

    def __init__(
        self,
        recording: dict[tuple[str, str], list[str]],
        *,
        live: Mapping[str, Callable[..., Any]] | None = None,
        on_miss: OnMiss = "raise",
        repeat_last: bool = True,
        max_calls: int = 50,
    ) -> None:
        self._recording = recording
        self._live = dict(live or {})
        self.on_miss = on_miss
        self.repeat_last = repeat_last
        self.max_calls = max_calls
        self._served: collections.Counter[tuple[str, str]] = collections.Counter()
        self._lock = threading.Lock()
        self.uses: list[ToolUse] = []

    # -- the mapping: recorded and live tool names ---------------------------------------------
    def _names(self) -> list[str]:
        names = [name for name, _ in self._recording]
        return list(dict.fromkeys([*names, *self._live]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __getitem__(self, name: str) -> Callable[..., str]:
        """A function for `name` taking its arguments as keywords; for a tool neither recorded
        nor given live, every call is a miss."""

        def call(**args: Any) -> str:
            return self.call(name, args)

        call.__name__ = name
        return call

    @property
    def misses(self) -> list[ToolUse]:
        return [use for use in self.uses if use.source == "miss"]

    # -- answering a call ------------------------------------------------------------------------
    def _answer(self, name: str, args: dict[str, Any]) -> tuple[str | None, bool]:
        """The recorded answer (and True), or (None, False) when the recording has none left."""
        key = (name, canonical_args(args))
        with self._lock:
            if len(self.uses) >= self.max_calls:
                raise AgentLooped(
                    f"the agent made more than {self.max_calls} tool calls in one replay "
                    f"(the last: {name}({canonical_args(args)}))"
                )
            outputs = self._recording.get(key, [])
            served = self._served[key]
            if served < len(outputs) or (outputs and self.repeat_last):
                self._served[key] += 1
                output = outputs[min(served, len(outputs) - 1)]
                self.uses.append(ToolUse(ToolCall(name=name, args=args), output, "recording"))
                return output, True
        return None, False

    def _miss(self, name: str, args: dict[str, Any]) -> ReplayMiss:
        recorded = [dict(_parse(arguments)) for tool, arguments in self._recording if tool == name]
        answered = len(self._recording.get((name, canonical_args(args)), []))
        miss = ReplayMiss(name, args, recorded, answered=answered)
        with self._lock:
            self.uses.append(ToolUse(ToolCall(name=name, args=args), None, "miss", miss))
        return miss

    def _lookup(self, name: str, args: dict[str, Any]) -> tuple[str, Callable[..., Any] | None]:
        """The recorded answer, or the live function to run instead; a miss raises."""
        output, found = self._answer(name, args)
        if found:
            return output or "", None
        function = self._live.get(name) if self.on_miss == "live" else None
        if function is None:
            raise self._miss(name, args)
        return "", function

    def _went_live(self, name: str, args: dict[str, Any], result: Any) -> str:
        output = as_text(result)
        with self._lock:
            self.uses.append(ToolUse(ToolCall(name=name, args=args), output, "live"))
        return output

    def call(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        """Answer one call (from synchronous code)."""
        args = dict(args or {})
        output, function = self._lookup(name, args)
        if function is None:
            return output
        if inspect.iscoroutinefunction(function):
            try:
                result = anyio.from_thread.run(lambda: function(**args))
            except RuntimeError:  # not in a worker thread of the replay's loop
                raise UsageError(
                    f"the live tool {name} is async: call it with `await tools.acall(...)`"
                ) from None
        else:
            result = function(**args)
        return self._went_live(name, args, result)

    async def acall(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        """Answer one call (from async code); a synchronous live tool runs in a worker thread."""
        args = dict(args or {})
        output, function = self._lookup(name, args)
        if function is None:
            return output
        if inspect.iscoroutinefunction(function):
            result = await function(**args)
        else:
            result = await anyio.to_thread.run_sync(lambda: function(**args))
        return self._went_live(name, args, result)


def _parse(arguments: str) -> dict[str, Any]:
    import json

    value = json.loads(arguments)
    return value if isinstance(value, dict) else {}


def live_tools(tools: Any) -> dict[str, Callable[..., Any]]:
    """The live functions given: a mapping of name to function, or functions named by
    `__name__`."""
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        items = list(tools.items())
    elif isinstance(tools, (list, tuple)):
        items = [(getattr(f, "__name__", None), f) for f in tools]
    else:
        raise UsageError(
            f"tools must be a dict of name to function or a list of functions, got "
            f"{type(tools).__name__}"
        )
    for name, function in items:
        if not isinstance(name, str) or not name or not callable(function):
            raise UsageError(f"tools: {name!r} is not a tool name with a function")
    return dict(items)


__all__ = ["OnMiss", "ReplayMiss", "ReplayTools", "ToolUse", "live_tools", "recorded_outputs"]
