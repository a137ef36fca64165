"""BFCL: tool-call metrics against curated expected calls and controlled corruptions of them.

BFCL's possible answers list, per call and argument, every acceptable value ("" = the argument
may be left out). The reference given to the metric is the first acceptable value of each
argument. From it, deterministic variants are built; BFCL's own checker would accept the first
group (label 1) and reject the second (label 0):

- acceptable: `canonical` (the reference itself), `alternative_value` (another listed value),
  `omitted_optional` (an optional argument left out), `swapped_order` (parallel calls reversed);
- corrupted: `wrong_value`, `missing_argument` (a required one), `missing_call`, `extra_call`
  (the first call made twice), `wrong_function` (another offered tool's name).

Irrelevance cases expect no call: `no_call` is acceptable, calling an offered tool is not.
`limit` takes the first N cases of each category.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from assay.benchmark.loaders import _jsonl
from assay.benchmark.suites import SuiteData, check_split, suite_file

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "irrelevance",
)
ACCEPTABLE = ("canonical", "alternative_value", "omitted_optional", "swapped_order", "no_call")
CORRUPTED = (
    "wrong_value",
    "missing_argument",
    "missing_call",
    "extra_call",
    "wrong_function",
    "call_when_none",
)

Call = dict[str, Any]  # {"name": ..., "args": {...}}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _choices(options: list[Any]) -> list[Any]:
    return [option for option in options if option != ""]


def _pick(value: Any) -> Any:
    """A nested dict of acceptable values becomes a dict of the first acceptable ones."""
    if isinstance(value, dict):
        picked = {}
        for key, options in value.items():
            if isinstance(options, list):
                kept = _choices(options)
                if kept:
                    picked[key] = _pick(kept[0])
            else:
                picked[key] = options
        return picked
    return value


def reference_calls(ground_truth: list[dict[str, Any]]) -> list[Call]:
    return [
        {
            "name": name,
            "args": {
                arg: _pick(_choices(options)[0])
                for arg, options in spec.items()
                if _choices(options)
            },
        }
        for entry in ground_truth
        for name, spec in entry.items()
    ]


def _wrong(value: Any, options: list[Any]) -> Any:
    """A value of the same kind that none of the acceptable values equals."""
    taken = {_text(_pick(option)) for option in options}
    if isinstance(value, bool):
        candidates: list[Any] = [not value]
    elif isinstance(value, int):
        candidates = [value + step for step in range(1, 50)]
    elif isinstance(value, float):
        candidates = [value + 1.5 + step for step in range(50)]
    elif isinstance(value, str):
        candidates = [f"{value} (wrong)"] + [f"wrong{step}" for step in range(50)]
    elif isinstance(value, list):
        candidates = [[*value, value[0]] if value else ["wrong"], [*value, "wrong"]]
    elif isinstance(value, dict):
        candidates = [{**value, "wrong": 1}]
    else:
        candidates = ["wrong"]
    candidates.append("wrong value")
    return next(candidate for candidate in candidates if _text(candidate) not in taken)


def variants(
    ground_truth: list[dict[str, Any]], offered: list[str]
) -> list[tuple[str, list[Call]]]:
    """(variant name, calls made) for one case; only the variants that apply to it."""
    reference = reference_calls(ground_truth)
    specs = [(name, spec) for entry in ground_truth for name, spec in entry.items()]
    made: list[tuple[str, list[Call]]] = [("canonical", copy.deepcopy(reference))]

    def changed(index: int, arg: str, value: Any = None, drop: bool = False) -> list[Call]:
        calls = copy.deepcopy(reference)
        if drop:
            calls[index]["args"].pop(arg)
        else:
            calls[index]["args"][arg] = value
        return calls

    alternative = next(
        (
            (i, arg, _pick(_choices(options)[1]))
            for i, (_, spec) in enumerate(specs)
            for arg, options in spec.items()
            if len(_choices(options)) > 1
            and _text(_pick(_choices(options)[1])) != _text(reference[i]["args"][arg])
        ),
        None,
    )
    if alternative:
        made.append(("alternative_value", changed(*alternative)))
    optional = next(
        (
            (i, arg)
            for i, (_, spec) in enumerate(specs)
            for arg, options in spec.items()
            if "" in options and _choices(options)
        ),
        None,
    )
    if optional:
        made.append(("omitted_optional", changed(*optional, drop=True)))
    if len(reference) > 1 and [_text(c) for c in reference[::-1]] != [_text(c) for c in reference]:
        made.append(("swapped_order", copy.deepcopy(reference[::-1])))
    required = [
        (i, arg, options)
        for i, (_, spec) in enumerate(specs)
        for arg, options in spec.items()
        if "" not in options and _choices(options)
    ]
    target = (
        required[0]
        if required
        else next(
            (
                (i, arg, options)
                for i, (_, spec) in enumerate(specs)
                for arg, options in spec.items()
                if _choices(options)
            ),
            None,
        )
    )
    if target:
        i, arg, options = target
        made.append(("wrong_value", changed(i, arg, _wrong(reference[i]["args"][arg], options))))
    if required:
        made.append(("missing_argument", changed(required[0][0], required[0][1], drop=True)))
    made.append(("missing_call", copy.deepcopy(reference[:-1])))
    made.append(("extra_call", [*copy.deepcopy(reference), copy.deepcopy(reference[0])]))
    other = next(
        (name for name in offered if name not in {call["name"] for call in reference}), None
    )
    if other:
        calls = copy.deepcopy(reference)
        calls[0]["name"] = other
        made.append(("wrong_function", calls))
    return made


def _placeholder(schema: dict[str, Any]) -> Any:
    kind = str(schema.get("type", "string"))
    return {
        "integer": 1,
        "float": 1.0,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "dict": {},
        "object": {},
        "tuple": [],
    }.get(kind, "x")


def _question(case: dict[str, Any]) -> str:
    turns = case.get("question") or []
    messages = [
        message for turn in turns for message in (turn if isinstance(turn, list) else [turn])
    ]
    return (
        "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        or "(no question)"
    )


def _conversation(question: str, calls: list[Call]) -> list[dict[str, Any]]:
    conversation: list[dict[str, Any]] = [{"type": "human", "content": question}]
    if calls:
        conversation.append({"type": "ai", "content": "", "tool_calls": calls})
    else:
        conversation.append({"type": "ai", "content": "I have no tool to call for this."})
    return conversation


def load_bfcl(
    root: Path,
    aspect: str = "tool_calls",
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
) -> SuiteData:
    check_split("bfcl", split)
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    labels: list[int] = []
    groups: list[str] = []
    sources: list[str] = []
    cases = 0
    for category in CATEGORIES:
        path = suite_file(root, "bfcl", f"BFCL_v4_{category}.json")
        questions = _jsonl(path)[:limit] if limit is not None else _jsonl(path)
        sources.append(str(path.relative_to(root)))
        answers: dict[str, Any] = {}
        if category != "irrelevance":
            answer_path = suite_file(root, "bfcl", f"possible_answer/BFCL_v4_{category}.json")
            answers = {record["id"]: record["ground_truth"] for record in _jsonl(answer_path)}
            sources.append(str(answer_path.relative_to(root)))
        for case in questions:
            cases += 1
            offered = [function["name"] for function in case.get("function", [])]
            question = _question(case)
            if category == "irrelevance":
                function = case["function"][0]
                parameters = function.get("parameters", {})
                args = {
                    name: _placeholder(parameters.get("properties", {}).get(name, {}))
                    for name in parameters.get("required", [])
                }
                made = [
                    ("no_call", []),
                    ("call_when_none", [{"name": function["name"], "args": args}]),
                ]
                reference: list[Call] = []
            else:
                made = variants(answers[case["id"]], offered)
                reference = reference_calls(answers[case["id"]])
            for name, calls in made:
                rows.append(
                    {
                        "user_input": _conversation(question, calls),
                        "reference_tool_calls": reference,
                    }
                )
                ids.append(f"{case['id']}-{name}")
                labels.append(int(name in ACCEPTABLE))
                groups.append(name)
    notes = [
        "label 1 = BFCL would accept the calls; a metric 'passes' a row when it scores 1.0",
        "irrelevance rows have an empty reference_tool_calls (no call expected)",
    ]
    return SuiteData(
        "bfcl",
        aspect,
        split,
        "agreement",
        rows,
        ids,
        cases,
        sources,
        labels=labels,
        groups=groups,
        notes=notes,
    )


__all__ = ["ACCEPTABLE", "CATEGORIES", "CORRUPTED", "load_bfcl", "reference_calls", "variants"]
