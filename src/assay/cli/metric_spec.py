"""Parse metric specs given on the command line: `bleu_score,rouge_score(rouge_type=rouge1)`."""

from __future__ import annotations

import json
from typing import Any

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.registry import create_metric


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """Split on `separator` except inside parentheses or quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return [part for part in parts if part]


_PYTHON_WORDS = {"None": None, "True": True, "False": False}


def _parse_value(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in _PYTHON_WORDS:  # as the results tables print them: lexical_anchor=True
        return _PYTHON_WORDS[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # a bare word such as rouge1 is a string


def split_metric_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """`name` or `name(key=value, ...)` as (name, params); values are JSON literals or bare strings."""
    spec = spec.strip()
    if "(" not in spec:
        return spec, {}
    if not spec.endswith(")"):
        raise UsageError(f"metric spec {spec!r}: expected name(key=value, ...)")
    name, _, inner = spec[:-1].partition("(")
    params: dict[str, Any] = {}
    for item in split_top_level(inner):
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"metric spec {spec!r}: parameter {item!r} is not key=value")
        params[key.strip()] = _parse_value(value)
    return name.strip(), params


def parse_metric(spec: str) -> Metric:
    """The metric a spec names, e.g. `faithfulness(scoring=binary)`."""
    name, params = split_metric_spec(spec)
    return create_metric(name, **params)


def parse_metrics(text: str) -> list[Metric]:
    specs = split_top_level(text)
    if not specs:
        raise UsageError("--metrics is empty; `assay metrics` lists the available ones")
    return [parse_metric(spec) for spec in specs]


def parse_column_map(text: str | None) -> dict[str, str]:
    """`field=column,field=column` (either orientation; see EvaluationDataset)."""
    if not text:
        return {}
    mapping = {}
    for item in split_top_level(text):
        key, equals, value = item.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise UsageError(f"--column-map entry {item!r} is not name=name")
        mapping[key.strip()] = value.strip()
    return mapping
