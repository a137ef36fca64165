"""The rules a RagMetrics criterion must follow, shared by the SDK (on construction) and the server.

The library's `assay.metrics.criteria.Criteria` is the authority on what it can score (phase,
criteria type, output type, match type, function name); this module runs it and adds what a
stored criterion needs on top: a name, a 5-point scale with its header and five labels, a boolean
with its header, a prompt criterion with its prompt, a function criterion with its pattern, and a
regex that RE2 accepts (the server runs regexes with RE2, never with backtracking `re`).

`validation_status` is computed, never taken from the caller: "valid" when the rules hold and,
for a function criterion with a `test_string`, when the test string matches; "invalid" when a
function criterion's pattern does not match its own test string.
"""

from __future__ import annotations

import re
from typing import Any

from assay.errors import UsageError

TEXT_FIELDS = (
    "name",
    "phase",
    "description",
    "prompt",
    "bool_true",
    "bool_false",
    "output_type",
    "header",
    "likert_score_1",
    "likert_score_2",
    "likert_score_3",
    "likert_score_4",
    "likert_score_5",
    "criteria_type",
    "function_name",
    "match_type",
    "match_pattern",
    "test_string",
    "validation_status",
)
FIELDS = (*TEXT_FIELDS, "case_sensitive")
LIKERT = ("likert_score_1", "likert_score_2", "likert_score_3", "likert_score_4", "likert_score_5")
MATCH_TYPES = ("starts_with", "ends_with", "contains", "regex_match")


class CriteriaProblem(UsageError):
    """A criterion breaks a rule; `field` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.detail = message
        super().__init__(f"{field}: {message}")


def _re2() -> Any | None:
    try:
        import re2
    except ImportError:
        return None
    return re2


def compile_pattern(pattern: str, case_sensitive: bool, *, require_re2: bool = False) -> Any:
    """Compile with RE2 (linear time); with plain `re` only where RE2 is absent and not required."""
    re2 = _re2()
    if re2 is None:
        if require_re2:
            from assay.errors import MissingDependency

            raise MissingDependency("google-re2", "platform", "running function criteria")
        try:
            return re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
        except re.error as exc:
            raise CriteriaProblem("match_pattern", f"invalid regex {pattern!r}: {exc}") from None
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = bool(case_sensitive)
    options.max_mem = 8 << 20
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise CriteriaProblem(
            "match_pattern",
            f"invalid regex {pattern!r} (RE2 syntax, no backreferences or lookaround): {reason}",
        ) from None


def string_match(
    text: str,
    match_type: str,
    pattern: str,
    case_sensitive: bool = False,
    *,
    require_re2: bool = True,
) -> bool:
    """The `string_match` function, with regexes run by RE2."""
    if match_type == "regex_match":
        return (
            compile_pattern(pattern, case_sensitive, require_re2=require_re2).search(text)
            is not None
        )
    if not case_sensitive:
        text, pattern = text.casefold(), pattern.casefold()
    if match_type == "starts_with":
        return text.startswith(pattern)
    if match_type == "ends_with":
        return text.endswith(pattern)
    if match_type == "contains":
        return pattern in text
    raise CriteriaProblem(
        "match_type", f"must be one of {', '.join(MATCH_TYPES)}, got {match_type!r}"
    )


_LIBRARY_FIELDS = (
    ("phase", "phase"),
    ("unknown function", "function_name"),
    ("match_type", "match_type"),
    ("invalid regex", "match_pattern"),
    ("output_type", "output_type"),
    ("criteria_type", "criteria_type"),
)


def _library_check(values: dict[str, Any]) -> None:
    from assay.metrics.criteria import Criteria as LibraryCriteria

    try:
        LibraryCriteria(**{k: values[k] for k in FIELDS if k != "validation_status"})
    except UsageError as exc:
        message = str(exc).split(": ", 1)[-1]
        field = next((f for key, f in _LIBRARY_FIELDS if message.startswith(key)), "criteria_type")
        if field == "match_pattern":
            return  # the regex is checked below, with the engine that will run it
        prefix = f"{field} "
        raise CriteriaProblem(
            field, message[len(prefix) :] if message.startswith(prefix) else message
        ) from None


def normalise(values: dict[str, Any]) -> dict[str, Any]:
    """Every field present, text fields as str, `function_name` defaulted for function criteria."""
    out: dict[str, Any] = {
        f: values.get(f) if values.get(f) is not None else "" for f in TEXT_FIELDS
    }
    out["case_sensitive"] = bool(values.get("case_sensitive", False))
    if not out["criteria_type"]:
        out["criteria_type"] = "llm_judge"
    if out["criteria_type"] == "function":
        out["function_name"] = out["function_name"] or "string_match"
        out["output_type"] = out["output_type"] or "bool"
    return out


def check(values: dict[str, Any], *, require_re2: bool = False) -> dict[str, Any]:
    """Validate a criterion; return its normalised fields with `validation_status` computed.

    Raises `CriteriaProblem` naming the first field at fault.
    """
    data = normalise(values)
    for field in TEXT_FIELDS:
        if not isinstance(data[field], str):
            raise CriteriaProblem(field, f"must be a string, got {type(data[field]).__name__}")
    if not data["name"].strip():
        raise CriteriaProblem("name", "must not be empty")
    _library_check(data)
    kind, output = data["criteria_type"], data["output_type"]
    if kind == "llm_judge":
        if output in ("5-point", "bool") and not data["header"].strip():
            raise CriteriaProblem("header", f"a {output} criterion needs its question in `header`")
        if output == "5-point":
            missing = [f for f in LIKERT if not data[f].strip()]
            if missing:
                raise CriteriaProblem(
                    missing[0],
                    f"a 5-point criterion needs all five labels; missing {', '.join(missing)}",
                )
        if output == "prompt" and not (data["prompt"].strip() or data["description"].strip()):
            raise CriteriaProblem(
                "prompt", "a prompt criterion needs its `prompt` (or a `description`)"
            )
        data["validation_status"] = "valid"
        return data
    if not data["match_pattern"]:
        raise CriteriaProblem("match_pattern", "a function criterion needs a `match_pattern`")
    if data["match_type"] == "regex_match":
        compile_pattern(data["match_pattern"], data["case_sensitive"], require_re2=require_re2)
    if data["test_string"]:
        matched = string_match(
            data["test_string"],
            data["match_type"],
            data["match_pattern"],
            data["case_sensitive"],
            require_re2=require_re2,
        )
        data["validation_status"] = "valid" if matched else "invalid"
    else:
        data["validation_status"] = "valid"
    return data


__all__ = [
    "FIELDS",
    "LIKERT",
    "MATCH_TYPES",
    "TEXT_FIELDS",
    "CriteriaProblem",
    "check",
    "compile_pattern",
    "string_match",
]
