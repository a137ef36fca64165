"""Examples from a dataset file (CSV, JSONL or JSON), checked as the API checks an example: one
parser for the web UI's import and the API's `POST /datasets/import` (the SDK's
`Dataset(source_type=..., source_file=...)`), so a file is accepted or refused alike by both.

A file has one example per row, line or array item: `question` (required), `ground_truth_answer`
(or `answer`) and `ground_truth_context` (or `contexts`: a JSON list of passages, or one plain
passage). A bad one names its row (CSV, counting the header as row 1), line (JSONL) or item (JSON)
and its field, and nothing is saved.
"""

from __future__ import annotations

import io
import json
from typing import Any

from pydantic import ValidationError

from assay.errors import DataError
from assay.platform.server.schemas.bodies import EXAMPLES_MAX, ExampleIn
from assay.schema.strict_text import csv_records, strict_json

COLUMNS = ("question", "ground_truth_answer", "ground_truth_context")
ALIASES = {"answer": "ground_truth_answer", "contexts": "ground_truth_context"}
KINDS = ("csv", "jsonl", "json")


class ImportRefused(ValueError):
    """A file that cannot be imported; the message names the row (or line, or item) and field."""


def _context(value: Any) -> Any:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return parsed
    return value if value is not None else ""


def parse_examples(text: str, kind: str) -> list[dict[str, Any]]:
    """The examples of a `kind` ("csv", "jsonl" or "json") file; a bad one is `ImportRefused`
    naming it (1-based) and the field."""
    if kind not in KINDS:
        raise ImportRefused(f"source_type must be one of {', '.join(KINDS)}, got {kind!r}")
    rows: list[tuple[int, dict[str, Any]]] = []
    if kind == "json":
        try:
            document = strict_json(text)
        except json.JSONDecodeError as exc:
            raise ImportRefused(f"line {exc.lineno}: not JSON ({exc.msg})") from None
        except ValueError as exc:
            raise ImportRefused(str(exc)) from None
        if not isinstance(document, list) or not all(isinstance(v, dict) for v in document):
            raise ImportRefused("a .json dataset is a list of example objects")
        rows = list(enumerate(document, start=1))
    elif kind == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = strict_json(line)
            except json.JSONDecodeError as exc:
                raise ImportRefused(f"line {number}: not JSON ({exc.msg})") from None
            except ValueError as exc:  # a key given twice: which value was meant is unknowable
                raise ImportRefused(f"line {number}: {exc}") from None
            if not isinstance(value, dict):
                raise ImportRefused(f"line {number}: an example is a JSON object")
            rows.append((number, value))
    else:
        # rows numbered as a spreadsheet shows them: the header is row 1
        try:
            rows = list(csv_records(io.StringIO(text, newline=""), first_row=2))
        except DataError as exc:
            where = f"row {exc.row}: " if exc.row is not None else ""
            raise ImportRefused(f"{where}{exc.detail}") from None
        if "question" not in rows[0][1]:
            raise ImportRefused("row 1: the CSV header needs a `question` column")
    if len(rows) > EXAMPLES_MAX:
        raise ImportRefused(f"the file has {len(rows)} examples; the limit is {EXAMPLES_MAX}")
    examples = []
    where = {"jsonl": "line", "json": "item"}.get(kind, "row")
    for number, row in rows:
        values = {ALIASES.get(k, k): v for k, v in row.items() if k is not None}
        unknown = sorted(set(values) - set(COLUMNS))
        if unknown:
            raise ImportRefused(f"{where} {number}: unknown column {unknown[0]!r}")
        values["ground_truth_context"] = _context(values.get("ground_truth_context"))
        values.setdefault("ground_truth_answer", "")
        values["ground_truth_answer"] = values["ground_truth_answer"] or ""
        try:
            examples.append(ExampleIn.model_validate(values).model_dump())
        except ValidationError as exc:
            problem = exc.errors()[0]
            name = ".".join(str(p) for p in problem["loc"]) or "row"
            raise ImportRefused(f"{where} {number}, {name}: {problem['msg']}") from None
    return examples
