"""A logged trace's payload (input, output, raw request and response, contexts, spans) stored once,
compressed, in `logged_traces.payload` (issue #46: the JSON columns held the same texts five and
six times over, about 10 kB a trace).

Encoding: the six fields as one JSON document in which every string of at least `SHARED_MIN`
characters is kept once, in a table, and referenced (`{"$s": i}`) where it appears again: the
answer of an LLM span is also the trace's output, the raw response's output and part of the
span's input and output, and each copy costs a reference. The input (or output) is left out when
it is a string equal to the searchable `input_text` (`output_text`), which the row holds anyway.
The document is written by orjson (about twenty times faster than the standard library's `json`,
which ingest felt: one payload a trace) unless it holds what orjson would write differently or
refuse (a non-finite float, an integer past 64 bits, a key that is not a string, a type of its
own), which the standard library writes as before; either reads back as the same values. It is
compressed with zlib (the standard library's; level 6) when it is over `COMPRESS_MIN` bytes. The
first byte says how the rest is stored (`j` JSON, `z` zlib JSON), so a later codec can be added
beside them.

Rows written before migration 0007 have no payload and keep their fields in the old JSON columns;
`PayloadFields` reads either, and a row that is written again (an edit, later spans) moves to the
payload. No queries here.
"""

from __future__ import annotations

import json
import math
import zlib
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import null

FIELDS = ("input", "output", "raw_input", "raw_output", "contexts", "spans")
LEGACY = {field: f"legacy_{field}" for field in FIELDS}  # the old columns' attribute names
SHARED_MIN = 64
COMPRESS_MIN = 256
_JSON, _ZLIB = b"j", b"z"


def _share(value: Any, table: list[str], index: dict[str, int]) -> Any:
    if isinstance(value, str):
        if len(value) < SHARED_MIN:
            return value
        if value not in index:
            index[value] = len(table)
            table.append(value)
        return {"$s": index[value]}
    if isinstance(value, list):
        return [_share(v, table, index) for v in value]
    if isinstance(value, dict):
        shared = {k: _share(v, table, index) for k, v in value.items()}
        if "$s" in value or "$d" in value:  # a user's own key of that name: escaped
            return {"$d": shared}
        return shared
    return value


def _shared(document: dict[str, Any]) -> tuple[Any, list[str], bool]:
    """`_share` of the document, walked by exact type (the hot path of ingest); plus whether
    orjson writes every value in it as `json` would: False for a non-finite float or a type
    the walk does not know (those parts go through `_share` itself)."""
    table: list[str] = []
    index: dict[str, int] = {}
    plain = True

    def walk(value: Any) -> Any:
        nonlocal plain
        kind = type(value)
        if kind is str:
            if len(value) < SHARED_MIN:
                return value
            at = index.get(value)
            if at is None:
                at = index[value] = len(table)
                table.append(value)
            return {"$s": at}
        if kind is dict:
            shared = {k: walk(v) for k, v in value.items()}
            if "$s" in value or "$d" in value:  # a user's own key of that name: escaped
                return {"$d": shared}
            return shared
        if kind is list:
            return [walk(v) for v in value]
        if kind is int or kind is bool or value is None:
            return value
        if kind is float and math.isfinite(value):
            return value
        plain = False
        return _share(value, table, index)

    return walk(document), table, plain


def _unshare(value: Any, table: list[str]) -> Any:
    if isinstance(value, list):
        return [_unshare(v, table) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and "$s" in value and isinstance(value["$s"], int):
            return table[value["$s"]]
        if len(value) == 1 and "$d" in value and isinstance(value["$d"], dict):
            return {k: _unshare(v, table) for k, v in value["$d"].items()}
        return {k: _unshare(v, table) for k, v in value.items()}
    return value


def encode(fields: dict[str, Any], input_text: str = "", output_text: str = "") -> bytes:
    """The payload bytes of `fields` (the six payload fields)."""
    document = dict(fields)
    omitted = []
    for name, text in (("input", input_text), ("output", output_text)):
        if isinstance(document.get(name), str) and document[name] == text:
            del document[name]
            omitted.append(name)
    body, table, plain = _shared(document)
    whole = {"v": 1, "strings": table, "fields": body, "as_text": omitted}
    raw = None
    if plain:
        try:
            raw = orjson.dumps(whole)
        except orjson.JSONEncodeError:  # an integer past 64 bits, a key that is not a string
            raw = None
    if raw is None:
        raw = json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode()
    if len(raw) < COMPRESS_MIN:
        return _JSON + raw
    return _ZLIB + zlib.compress(raw, 6)


def decode(payload: bytes, input_text: str = "", output_text: str = "") -> dict[str, Any]:
    """The six payload fields of stored payload bytes."""
    kind, rest = payload[:1], payload[1:]
    if kind == _ZLIB:
        rest = zlib.decompress(rest)
    elif kind != _JSON:
        raise ValueError(f"unknown trace payload format {kind!r}")
    document = json.loads(rest)
    fields = _unshare(document["fields"], document["strings"])
    texts = {"input": input_text, "output": output_text}
    for name in document.get("as_text", []):
        fields[name] = texts[name]
    return {
        "input": fields.get("input"),
        "output": fields.get("output"),
        "raw_input": fields.get("raw_input"),
        "raw_output": fields.get("raw_output"),
        "contexts": fields.get("contexts") or [],
        "spans": fields.get("spans") or [],
    }


def row_columns(values: dict[str, Any]) -> dict[str, Any]:
    """Row values for an INSERT: the six payload fields of `values` replaced by the payload (and
    the old columns left empty)."""
    out = {k: v for k, v in values.items() if k not in FIELDS}
    out["payload"] = encode(
        {f: values.get(f) for f in FIELDS},
        values.get("input_text", ""),
        values.get("output_text", ""),
    )
    out.update(input=null(), output=null(), raw_input=null(), raw_output=null())
    out.update(contexts=[], spans=[])
    return out


class PayloadFields:
    """`input`, `output`, `raw_input`, `raw_output`, `contexts` and `spans` of a `LoggedTrace`,
    read from its payload (or, for a row stored before 0007, its old JSON columns) and written
    to the payload. Decoded once per row and payload."""

    payload: Any
    input_text: Any
    output_text: Any
    if TYPE_CHECKING:  # the properties over FIELDS, set on the class below
        input: Any
        output: Any
        raw_input: Any
        raw_output: Any
        contexts: Any
        spans: Any

    def _fields(self) -> dict[str, Any]:
        cached = self.__dict__.get("_payload_cache")
        if cached is not None and cached[0] is self.payload:
            return cached[1]
        if self.payload is not None:
            fields = decode(self.payload, self.input_text or "", self.output_text or "")
        else:  # stored before migration 0007
            fields = {f: getattr(self, LEGACY[f]) for f in FIELDS}
            fields["contexts"] = fields["contexts"] or []
            fields["spans"] = fields["spans"] or []
        self.__dict__["_payload_cache"] = (self.payload, fields)
        return fields

    def _set(self, field: str, value: Any) -> None:
        fields = dict(self._fields())
        fields[field] = value
        payload = encode(fields, self.input_text or "", self.output_text or "")
        self.payload = payload
        for name in FIELDS:  # the row now lives in its payload
            if getattr(self, LEGACY[name]) not in (None, []):
                setattr(self, LEGACY[name], [] if name in ("contexts", "spans") else None)
        self.__dict__["_payload_cache"] = (payload, fields)


def _field(name: str) -> property:
    def get(self: PayloadFields) -> Any:
        return self._fields()[name]

    def put(self: PayloadFields, value: Any) -> None:
        self._set(name, value)

    return property(get, put, doc=f"The trace's {name} (from its payload).")


for _name in FIELDS:
    setattr(PayloadFields, _name, _field(_name))


__all__ = ["FIELDS", "LEGACY", "PayloadFields", "decode", "encode", "row_columns"]
