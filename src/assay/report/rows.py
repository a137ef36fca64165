"""The per-row drill-down: a row's inputs and outputs, then each metric's score, reason and the
verdicts behind it (`details`).

This module decides what to show (plain data: dicts of strings and numbers, the "views"); the
markup is `templates/row.html.j2` and `templates/value.html.j2`, whose engine escapes every datum.
"""

from __future__ import annotations

import json
from typing import Any

from assay.report.model import Cell, Row, as_number
from assay.report.stats import format_value
from assay.report.svg import colour

_SNIPPET_FIELDS = (
    "user_input",
    "question",
    "query",
    "input",
    "text",
    "email",
    "expression",
    "prompt",
)
_ROLES = {
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "user": "user",
    "assistant": "assistant",
    "system": "system",
}
_MAX_DEPTH = 3
_YES = ("yes", "pass", "supported")
_NO = ("no", "fail", "unsupported")

View = dict[str, Any]


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def snippet(row: Row, limit: int = 110) -> str:
    value = next(
        (row.fields[name] for name in _SNIPPET_FIELDS if row.fields.get(name) is not None), None
    )
    if value is None:
        value = next((v for v in row.fields.values() if isinstance(v, str) and v.strip()), "")
    if isinstance(value, list):  # a conversation: its first message
        first = value[0] if value else ""
        value = first.get("content", "") if isinstance(first, dict) else str(first)
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tone(value: Any) -> str:
    """A CSS class for a score: good / mid / bad when the value reads as a number, else plain."""
    number = as_number(value)
    if number is None or not 0.0 <= number <= 1.0:
        return "plain"
    return "good" if number >= 0.75 else "mid" if number >= 0.4 else "bad"


def chip(cell: Cell | None) -> View:
    """A score chip: its CSS class and its text."""
    if cell is None:
        return {"css": "none", "text": "–"}
    if cell.status == "ok":
        return {"css": tone(cell.value), "text": format_value(cell.value)}
    return {"css": cell.status, "text": cell.status}


# -- values -------------------------------------------------------------------------------------
def _is_message(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and "content" in item
        and (item.get("type") in _ROLES or item.get("role") in _ROLES)
    )


def value_view(value: Any, depth: int = 0) -> View:
    """How a field or a `details` value is shown, by its shape (`kind`)."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, str):
        return {"kind": "text", "text": value}
    if isinstance(value, (bool, int, float)):
        return {"kind": "scalar", "text": format_value(value)}
    if isinstance(value, list) and value and all(_is_message(item) for item in value):
        return {"kind": "conversation", "messages": [_message(message) for message in value]}
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return {"kind": "texts", "texts": value} if value else {"kind": "empty"}
    if (
        isinstance(value, list)
        and value
        and depth < _MAX_DEPTH
        and all(isinstance(i, dict) for i in value)
    ):
        return _table(value, depth)
    if isinstance(value, dict) and value and depth < _MAX_DEPTH:
        return {
            "kind": "kv",
            "entries": [(str(key), value_view(item, depth + 1)) for key, item in value.items()],
        }
    if isinstance(value, list) and all(isinstance(item, (int, float, bool)) for item in value):
        return {"kind": "scalar", "text": format_value(value)}
    return {"kind": "json", "text": _json(value)}


def _table(items: list[dict[str, Any]], depth: int) -> View:
    columns = list(dict.fromkeys(key for item in items for key in item))[:8]
    rows = []
    for item in items:
        cells = []
        for column in columns:
            value = item.get(column)
            verdict = str(value).lower() if column in ("verdict", "label") else ""
            css = "yes" if verdict in _YES else "no" if verdict in _NO else ""
            shown = (
                value_view(value, depth + 1)
                if isinstance(value, (dict, list))
                else {"kind": "plain", "text": format_value(value)}
            )
            cells.append({"css": css, "value": shown})
        rows.append(cells)
    return {"kind": "table", "columns": [str(column) for column in columns], "rows": rows}


def _message(message: dict[str, Any]) -> View:
    kind: Any = message.get("type") or message.get("role")  # any JSON value in a loaded run
    role = _ROLES.get(kind, "message")
    calls = [
        f"{call.get('name', '?')}({json.dumps(call.get('args', {}), ensure_ascii=False)})"
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    ]
    return {"role": role, "content": message["content"] or None, "calls": calls}


def fields_view(fields: dict[str, Any]) -> list[tuple[str, View]]:
    return [(str(name), value_view(value)) for name, value in fields.items()]


# -- one row ------------------------------------------------------------------------------------
def cell_view(cell: Cell) -> View:
    tokens = None
    if cell.usage and cell.usage.get("requests"):
        tokens = (cell.usage.get("input_tokens", 0), cell.usage.get("output_tokens", 0))
    return {
        "chip": chip(cell),
        "attempts": cell.attempts if cell.attempts is not None and cell.status == "error" else None,
        "tokens": tokens,
        "status": cell.status,
        "reason": cell.reason or None,
        "details": value_view(cell.details) if cell.details else None,
        "raw": cell.raw or None,
    }


def row_view(key: str, rows: list[Row | None], names: list[str], metrics: list[str]) -> View:
    """One row lined up across runs; with several runs, each metric shows every run's cell."""
    first = next(row for row in rows if row is not None)
    flags = {cell.status for row in rows if row is not None for cell in row.cells.values()}
    flags |= {"error"} if any(row is not None and row.error for row in rows) else set()
    sort_values = []
    for metric in metrics:
        cell = rows[-1].cells.get(metric) if rows[-1] is not None else None
        number = as_number(cell.value) if cell is not None and cell.status == "ok" else None
        sort_values.append("" if number is None else str(number))
    runs = []
    for index, row in enumerate(rows):
        changed = None
        if row is not None and row is not first:
            changed = (
                fields_view({k: v for k, v in row.fields.items() if first.fields.get(k) != v})
                or None
            )
        runs.append(
            {
                "name": names[index],
                "colour": colour(index),
                "present": row is not None,
                "error": row.error if row is not None else None,
                "changed": changed,
            }
        )
    scores = []
    for metric in metrics:
        cells = [row.cells.get(metric) if row is not None else None for row in rows]
        scores.append(
            {
                "metric": metric,
                "chips": [chip(cell) for cell in cells],
                "cells": [cell_view(cell) if cell is not None else None for cell in cells],
            }
        )
    return {
        "key": key,
        "snippet": snippet(first),
        "flags": " ".join(sorted(flags)),
        "sort": sort_values,
        "fields": fields_view(first.fields),
        "runs": runs,
        "several": len(rows) > 1,
        "scores": scores,
    }


__all__ = ["cell_view", "chip", "fields_view", "row_view", "snippet", "tone", "value_view"]
