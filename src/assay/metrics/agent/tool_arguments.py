"""Tool-argument correctness: are the arguments the agent wrote into its tool calls right?

Each call the agent made is one step, checked in two ways:

- against its tool's JSON Schema, when the metric knows one (`tools=` on the metric, or a `tools`
  column of the row): types, required arguments, enums, ranges, whatever the schema says;
- against the reference call it pairs with, when the sample has `reference_tool_calls`: every
  argument the reference names must have the reference's value (arguments the reference leaves
  out are not compared, only schema-checked). A call that pairs with no reference call (an extra
  call, another tool) has arguments nobody asked for and counts as wrong.

score = calls with no problem / calls made. Reference calls the agent never made are listed as
`missing` but do not count: a call never made is a tool-selection error (`tool_call_f1`,
`tool_call_accuracy`), and this metric judges only what was written. No judge.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay._util.deps import require
from assay.errors import NotApplicable, UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import run, size_of
from assay.metrics.classic._tool_calls import arg_text, expected_calls, made_calls
from assay.schema.messages import ToolCall
from assay.schema.outcome import MetricResult

# Schema problems listed per call; a call this wrong is wrong either way, the rest is noise.
MAX_PROBLEMS_PER_CALL = 10


def tool_schemas(tools: Any, where: str = "tools") -> dict[str, dict[str, Any]]:
    """Tool name -> JSON Schema of its arguments, from `{name: schema}` or a list of function
    definitions (`{"name", "parameters"}`, or OpenAI's `{"type": "function", "function": {...}}`).
    Anything else is a UsageError naming `where` and the entry."""
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        schemas = dict(tools)
    elif isinstance(tools, list):
        schemas = {}
        for position, entry in enumerate(tools):
            spec = entry.get("function", entry) if isinstance(entry, Mapping) else None
            if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
                raise UsageError(
                    f"{where}[{position}] must be a function definition with a 'name' "
                    "(and 'parameters', its arguments' JSON Schema)"
                )
            schemas[spec["name"]] = spec.get("parameters") or {"type": "object"}
    else:
        raise UsageError(
            f"{where} must be a dict of tool name -> JSON Schema or a list of function "
            f"definitions, got {type(tools).__name__}"
        )
    for name, schema in schemas.items():
        if not isinstance(schema, Mapping):
            raise UsageError(
                f"{where}[{name!r}] must be a JSON Schema (a dict), got {type(schema).__name__}"
            )
    return {str(name): dict(schema) for name, schema in schemas.items()}


def _validators(schemas: dict[str, dict[str, Any]], where: str) -> dict[str, Any]:
    """A jsonschema validator per tool, each schema checked against its own meta-schema first."""
    if not schemas:
        return {}
    require("jsonschema", extra="agents", feature="ToolArgumentCorrectness(tools=)")
    validators = {}
    for name, schema in schemas.items():
        try:
            validators[name] = _compiled(json.dumps(schema, sort_keys=True, default=str))
        except UsageError as exc:
            raise UsageError(f"{where}[{name!r}] is not a valid JSON Schema: {exc}") from None
    return validators


@functools.lru_cache(maxsize=1024)
def _compiled(schema_json: str) -> Any:
    """A checked validator for one schema (as canonical JSON): the rows of a data set often share
    their tools, and checking a schema against its meta-schema costs more than using it."""
    jsonschema = require("jsonschema", extra="agents", feature="ToolArgumentCorrectness(tools=)")
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise UsageError(exc.message) from None
    return cls(schema)


def schema_problems(validator: Any, args: dict[str, Any]) -> list[str]:
    """What the schema refuses in `args`, one line each, led by the argument's path."""
    problems = []
    for error in sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.path]):
        path = ".".join(str(part) for part in error.absolute_path)
        problems.append(f"{path}: {error.message}" if path else error.message)
    return problems[:MAX_PROBLEMS_PER_CALL]


def same_value(got: Any, want: Any) -> bool:
    """Numbers compare as numbers (5 == 5.0, booleans are not numbers); the rest as text, so 75
    and "75" agree and the key order of objects does not matter (as in tool_call_accuracy)."""
    numbers = (int, float)
    if (
        isinstance(got, numbers)
        and isinstance(want, numbers)
        and not isinstance(got, bool)
        and not isinstance(want, bool)
    ):
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=0.0)
    return arg_text(got) == arg_text(want)


def value_problems(args: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """The reference's arguments that the call left out or gave another value."""
    problems = []
    for key, want in reference.items():
        if key not in args:
            problems.append(f"{key}: missing (the reference has {_short(want)})")
        elif not same_value(args[key], want):
            problems.append(f"{key}: {_short(args[key])} where the reference has {_short(want)}")
    return problems


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pair_with_reference(calls: list[ToolCall], reference: list[ToolCall]) -> list[int | None]:
    """For each call made, the index of the reference call it is compared with (None: none).

    Calls pair only with reference calls of the same tool, each reference call at most once: first
    the calls whose values equal a reference call's, then the rest with the unused call of that
    tool sharing most values, earliest first. Parallel calls made in another order still pair with
    the calls they match."""
    pairs: list[int | None] = [None] * len(calls)
    used: set[int] = set()
    for exact in (True, False):
        for i, call in enumerate(calls):
            if pairs[i] is not None:
                continue
            best, best_hits = None, -1
            for j, want in enumerate(reference):
                if j in used or want.name != call.name:
                    continue
                hits = len(want.args) - len(value_problems(call.args, want.args))
                if exact and hits < len(want.args):
                    continue
                if hits > best_hits:
                    best, best_hits = j, hits
            if best is not None:
                pairs[i] = best
                used.add(best)
    return pairs


def tool_argument_score(verdicts: list[bool]) -> float:
    """Pure scoring: the share of calls whose arguments had no problem."""
    if not verdicts:
        raise ValueError("no calls to score")
    return sum(verdicts) / len(verdicts)


def check_calls(
    calls: list[ToolCall], validators: dict[str, Any], reference: list[ToolCall] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(one step per call made with its problems, the reference calls left unmade)."""
    pairs = pair_with_reference(calls, reference) if reference is not None else [None] * len(calls)
    steps = []
    for index, (call, paired) in enumerate(zip(calls, pairs, strict=True)):
        problems: list[str] = []
        if validators:
            if call.name in validators:
                problems += schema_problems(validators[call.name], call.args)
            else:
                problems.append(f"unknown tool {call.name!r}: no schema for it")
        if reference is not None:
            if paired is None:
                problems.append(f"no reference call to {call.name!r} left to pair with")
            else:
                problems += value_problems(call.args, reference[paired].args)
        steps.append(
            {
                "step": index,
                "tool": call.name,
                "args": call.args,
                "reference_step": paired,
                "correct": not problems,
                "problems": problems,
            }
        )
    made = {p for p in pairs if p is not None}
    missing = [
        {"reference_step": j, "tool": want.name, "args": want.args}
        for j, want in enumerate(reference or [])
        if j not in made
    ]
    return steps, missing


@dataclass(kw_only=True)
class ToolArgumentCorrectness(Metric):
    """The share of the agent's tool calls whose arguments fit the tool's schema and the
    reference call's values. `tools`: JSON Schema of each tool's arguments, by tool name, or a
    list of function definitions; a row's own `tools` column adds to (and overrides) it."""

    name: str = "tool_argument_correctness"
    tools: dict[str, Any] | list[Any] | None = None

    sample_kind = "multi_turn"

    def __post_init__(self) -> None:
        super().__post_init__()
        # Checked and compiled once, when the metric is made: a bad schema fails before any row.
        self._checkers: dict[str, Any] = _validators(tool_schemas(self.tools), "tools")

    async def _ascore(
        self,
        *,
        user_input: list[Any],
        reference_tool_calls: list[Any] | None = None,
        tools: Any = None,
    ) -> MetricResult:
        size = size_of(user_input, reference_tool_calls, tools)
        return await run(size, self._score, user_input, reference_tool_calls, tools)

    def _score(
        self, user_input: list[Any], reference_tool_calls: list[Any] | None, tools: Any
    ) -> MetricResult:
        row_tools = _validators(tool_schemas(tools, "the row's tools"), "the row's tools")
        validators = {**self._checkers, **row_tools}
        reference = (
            expected_calls(reference_tool_calls) if reference_tool_calls is not None else None
        )
        if not validators and reference is None:
            raise NotApplicable(
                "nothing to check the arguments against: give tool schemas (tools=) or "
                "reference_tool_calls"
            )
        calls = made_calls(user_input)
        if not calls:
            raise NotApplicable("the agent made no tool call, so wrote no arguments")
        steps, missing = check_calls(calls, validators, reference)
        value = tool_argument_score([step["correct"] for step in steps])
        wrong = [s for s in steps if not s["correct"]]
        reason = f"{len(steps) - len(wrong)} of {len(steps)} call(s) with correct arguments"
        if wrong:
            first = wrong[0]
            reason += f"; step {first['step']} ({first['tool']}): {first['problems'][0]}"
        if missing:
            reason += f"; {len(missing)} reference call(s) not made (not scored here)"
        return MetricResult(
            value,
            reason=reason,
            details={
                "steps": steps,
                "missing": missing,
                "checked_against": [
                    *(["schema"] if validators else []),
                    *(["reference"] if reference is not None else []),
                ],
            },
        )


__all__ = [
    "ToolArgumentCorrectness",
    "check_calls",
    "pair_with_reference",
    "same_value",
    "schema_problems",
    "tool_argument_score",
    "tool_schemas",
]
