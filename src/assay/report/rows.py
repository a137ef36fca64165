"""The per-row drill-down: a row's inputs and outputs, then each metric's score, reason and the
verdicts behind it (`details`). Every piece of data passes through `esc` before it is written."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from assay.report.model import Cell, Row, as_number
from assay.report.stats import format_value
from assay.report.svg import colour

_SNIPPET_FIELDS = ("user_input", "question", "query", "input", "text", "email", "expression", "prompt")
_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "user": "user", "assistant": "assistant",
          "system": "system"}
_MAX_DEPTH = 3


def esc(value: Any) -> str:
    return escape(value if isinstance(value, str) else str(value), quote=True)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def snippet(row: Row, limit: int = 110) -> str:
    value = next((row.fields[name] for name in _SNIPPET_FIELDS if row.fields.get(name) is not None), None)
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


def chip(cell: Cell | None) -> str:
    if cell is None:
        return '<span class="chip none">–</span>'
    if cell.status == "ok":
        return f'<span class="chip {tone(cell.value)}">{esc(format_value(cell.value))}</span>'
    return f'<span class="chip {esc(cell.status)}">{esc(cell.status)}</span>'


# -- values -------------------------------------------------------------------------------------
def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and "content" in item and (item.get("type") in _ROLES or item.get("role") in _ROLES)


def render_value(value: Any, depth: int = 0) -> str:
    if value is None:
        return '<span class="muted">none</span>'
    if isinstance(value, str):
        return f'<div class="text">{esc(value)}</div>'
    if isinstance(value, (bool, int, float)):
        return f"<span>{esc(format_value(value))}</span>"
    if isinstance(value, list) and value and all(_is_message(item) for item in value):
        return _conversation(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = "".join(f'<li><div class="text">{esc(item)}</div></li>' for item in value)
        return f'<ol class="texts">{items}</ol>' if value else '<span class="muted">empty list</span>'
    if isinstance(value, list) and value and depth < _MAX_DEPTH and all(isinstance(i, dict) for i in value):
        return _table(value, depth)
    if isinstance(value, dict) and value and depth < _MAX_DEPTH:
        entries = "".join(f"<dt>{esc(key)}</dt><dd>{render_value(item, depth + 1)}</dd>" for key, item in value.items())
        return f'<dl class="kv">{entries}</dl>'
    if isinstance(value, list) and all(isinstance(item, (int, float, bool)) for item in value):
        return f"<span>{esc(format_value(value))}</span>"
    return f'<pre class="json">{esc(_json(value))}</pre>'


def _table(items: list[dict[str, Any]], depth: int) -> str:
    columns = list(dict.fromkeys(key for item in items for key in item))[:8]
    head = "".join(f"<th>{esc(column)}</th>" for column in columns)
    body = []
    for item in items:
        cells = []
        for column in columns:
            value = item.get(column)
            verdict = str(value).lower() if column in ("verdict", "label") else ""
            css = ' class="yes"' if verdict in ("yes", "pass", "supported") else \
                ' class="no"' if verdict in ("no", "fail", "unsupported") else ""
            shown = esc(format_value(value)) if not isinstance(value, (dict, list)) else render_value(value, depth + 1)
            cells.append(f"<td{css}>{shown}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="details"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _conversation(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        role = _ROLES.get(message.get("type") or message.get("role"), "message")
        calls = "".join(
            f'<div class="call">→ {esc(call.get("name", "?"))}({esc(json.dumps(call.get("args", {}), ensure_ascii=False))})</div>'
            for call in message.get("tool_calls") or [] if isinstance(call, dict))
        content = f'<div class="text">{esc(message["content"])}</div>' if message.get("content") else ""
        parts.append(f'<div class="msg {esc(role)}"><span class="role">{esc(role)}</span>{content}{calls}</div>')
    return f'<div class="conversation">{"".join(parts)}</div>'


# -- one row ------------------------------------------------------------------------------------
def _cell_block(cell: Cell) -> str:
    parts = [f'<div class="score">{chip(cell)}']
    if cell.attempts is not None and cell.status == "error":
        parts.append(f' <span class="muted">after {esc(cell.attempts)} attempt(s)</span>')
    if cell.usage and cell.usage.get("requests"):
        parts.append(f' <span class="muted">{esc(cell.usage.get("input_tokens", 0))} in / '
                     f'{esc(cell.usage.get("output_tokens", 0))} out tokens</span>')
    parts.append("</div>")
    if cell.reason:
        parts.append(f'<div class="reason {esc(cell.status)}">{esc(cell.reason)}</div>')
    if cell.details:
        parts.append(f'<div class="details-block">{render_value(cell.details)}</div>')
    if cell.raw:
        parts.append(f'<details class="raw"><summary>raw model output</summary><pre class="json">{esc(cell.raw)}</pre></details>')
    return "".join(parts)


def render_row(key: str, rows: list[Row | None], names: list[str], metrics: list[str]) -> str:
    """One `<details>` per row; with several runs, each metric shows every run's cell."""
    first = next(row for row in rows if row is not None)
    flags = {cell.status for row in rows if row is not None for cell in row.cells.values()}
    flags |= {"error"} if any(row is not None and row.error for row in rows) else set()
    sort_values = []
    for position, metric in enumerate(metrics):
        cell = rows[-1].cells.get(metric) if rows[-1] is not None else None
        number = as_number(cell.value) if cell is not None and cell.status == "ok" else None
        sort_values.append(f' data-s{position}="{"" if number is None else number}"')
    chips = []
    for metric in metrics:
        cells = [chip(row.cells.get(metric) if row is not None else None) for row in rows]
        chips.append(f'<span class="pair" title="{esc(metric)}">{"→".join(cells)}</span>')
    summary = (f'<summary><span class="key">{esc(key)}</span><span class="snippet">{esc(snippet(first))}</span>'
               f'<span class="chips">{"".join(chips)}</span></summary>')
    body = ['<div class="row-body">', '<h4>data</h4>', _fields(first.fields)]
    for index, row in enumerate(rows):
        if row is None:
            body.append(f'<p class="muted">not in {esc(names[index])}</p>')
            continue
        if row.error:
            body.append(f'<div class="reason error">{esc(names[index])}: the row failed: {esc(row.error)}</div>')
        if row is not first:
            changed = {k: v for k, v in row.fields.items() if first.fields.get(k) != v}
            if changed:
                body.append(f'<h4>data that differs in <span style="color:{colour(index)}">{esc(names[index])}</span></h4>')
                body.append(_fields(changed))
    body.append('<h4>scores</h4><table class="cells"><tbody>')
    for metric in metrics:
        for index, row in enumerate(rows):
            cell = row.cells.get(metric) if row is not None else None
            run = f'<div class="run-name" style="color:{colour(index)}">{esc(names[index])}</div>' if len(rows) > 1 else ""
            metric_name = esc(metric) if index == 0 else ""
            content = _cell_block(cell) if cell is not None else '<span class="muted">no value</span>'
            body.append(f'<tr><th>{metric_name}</th><td>{run}{content}</td></tr>')
    body.append("</tbody></table></div>")
    return (f'<details class="row" data-flags="{esc(" ".join(sorted(flags)))}"{"".join(sort_values)}>'
            f'{summary}{"".join(body)}</details>')


def _fields(fields: dict[str, Any]) -> str:
    if not fields:
        return '<p class="muted">no input fields in this source</p>'
    entries = "".join(f"<dt>{esc(name)}</dt><dd>{render_value(value)}</dd>" for name, value in fields.items())
    return f'<dl class="kv fields">{entries}</dl>'


__all__ = ["chip", "esc", "render_row", "render_value", "snippet", "tone"]
