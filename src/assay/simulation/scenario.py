"""Scenarios: who the simulated user is, what they want, and what they know.

A `Scenario` is written in code, read from a file (`load_scenarios`: JSON Lines, JSON or CSV,
through the strict readers of `assay.schema.strict_text`, so a malformed row is a `DataError`
naming the file, the row and the field before any conversation starts), or made from a test set's
questions (`scenarios_from_testset`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import DataError, UsageError
from assay.schema.strict_text import csv_records, strict_json, text_lines


class Scenario(BaseModel):
    """One conversation to simulate.

    persona: who the user is and how they write ("a retired teacher, polite, types slowly").
    goal: what the user wants from the agent ("move my Friday booking to Monday").
    facts: what the user knows and may tell the agent when asked (a booking number, a date).
    reference_outcome: what a successful conversation ends with; it becomes the sample's
        `reference`, for `AgentGoalAccuracyWithReference`, and the goal judge reads it too.
    name: a label for reports and for matching results to scenarios (unique within a run).
    max_turns: this scenario's limit on user messages, instead of the run's `max_turns`.
    metadata: carried into the conversation's sample unchanged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    persona: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    facts: list[str] | None = None
    reference_outcome: str | None = None
    name: str | None = None
    max_turns: int | None = Field(default=None, ge=1, le=200)
    metadata: dict[str, Any] | None = None

    @field_validator("persona", "goal")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("facts", mode="before")
    @classmethod
    def _facts_as_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def label(self, index: int) -> str:
        """The scenario's name, else its position (#1 for the first)."""
        return self.name if self.name else f"#{index + 1}"


def _as_scenario(row: Any, *, file: str | None, row_number: int, is_index: bool) -> Scenario:
    if isinstance(row, Scenario):
        return row
    if not isinstance(row, Mapping):
        raise DataError(
            f"a scenario must be an object with persona and goal, got {type(row).__name__}",
            file=file,
            row=row_number,
            row_is_index=is_index,
        )
    try:
        return Scenario.model_validate(dict(row))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        message = first["msg"] if first["type"] != "extra_forbidden" else "unknown field"
        known = ", ".join(Scenario.model_fields)
        hint = f" (the fields are {known})" if first["type"] == "extra_forbidden" else ""
        raise DataError(
            f"{field}: {message}{hint}" if field else message,
            file=file,
            row=row_number,
            row_is_index=is_index,
            field=field,
        ) from None


def _csv_row(cells: dict[str, str]) -> dict[str, Any]:
    """A CSV row's cells as scenario fields: empty cells are missing, `facts` is a JSON list or
    one fact per line, `max_turns` a whole number, `metadata` a JSON object."""
    row: dict[str, Any] = {}
    for key, text in cells.items():
        if not text.strip():
            continue
        value: Any = text
        if key == "facts":
            value = _facts_cell(text)
        elif key == "max_turns":
            value = int(text) if text.strip().lstrip("-").isdigit() else text
        elif key == "metadata":
            try:
                value = strict_json(text)
            except ValueError:
                value = text  # reported by validation, naming the field
        row[key] = value
    return row


def _facts_cell(text: str) -> list[str] | str:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            parsed = strict_json(stripped)
        except ValueError:
            return text
        if isinstance(parsed, list):
            return parsed
    return [line.strip() for line in text.splitlines() if line.strip()]


def _read_rows(path: Path) -> Iterable[tuple[int, Any]]:
    suffix = path.suffix.lower()
    file = str(path)
    if suffix in (".jsonl", ".ndjson"):
        for number, line in enumerate(text_lines(path), start=1):
            if not line.strip():
                continue
            try:
                yield number, strict_json(line)
            except ValueError as exc:
                raise DataError(f"not valid JSON ({exc})", file=file, row=number) from None
    elif suffix == ".json":
        try:
            rows = strict_json("".join(text_lines(path)))
        except ValueError as exc:
            raise DataError(f"not valid JSON ({exc})", file=file) from None
        if not isinstance(rows, list):
            raise DataError("a .json scenario file must hold a list of objects", file=file)
        yield from enumerate(rows, start=1)
    elif suffix == ".csv":
        for number, cells in csv_records(text_lines(path), file=file):
            yield number, _csv_row(cells)
    else:
        raise DataError(
            f"unsupported file type {suffix or '(no extension)'!r}; scenarios are read from "
            ".jsonl, .json or .csv",
            file=file,
        )


def load_scenarios(source: str | Path | Iterable[Any]) -> list[Scenario]:
    """Scenarios from a file (.jsonl, .json or .csv) or from a list of dicts / `Scenario`s.

    Every row is checked before any conversation starts: a missing persona or goal, an unknown
    column, a blank cell where text is needed or two scenarios with one name is a `DataError`
    naming the file, the row and the field."""
    if isinstance(source, Scenario):
        source = [source]
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise DataError("file not found", file=str(path))
        pairs = list(_read_rows(path))
        file: str | None = str(path)
        is_index = False
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        pairs = list(enumerate(source))
        file, is_index = None, True
    else:
        raise UsageError(
            "scenarios must be a file path or a list of Scenario objects or dicts, got "
            f"{type(source).__name__}"
        )
    scenarios = [
        _as_scenario(row, file=file, row_number=number, is_index=is_index) for number, row in pairs
    ]
    if not scenarios:
        raise DataError("no scenarios: the list or file is empty", file=file)
    _check_unique_names(scenarios, [number for number, _ in pairs], file, is_index)
    return scenarios


def _check_unique_names(
    scenarios: list[Scenario], numbers: list[int], file: str | None, is_index: bool
) -> None:
    first: dict[str, int] = {}
    for scenario, number in zip(scenarios, numbers, strict=True):
        if scenario.name is None:
            continue
        if scenario.name in first:
            where = "index" if is_index else "row"
            raise DataError(
                f"the name {scenario.name!r} is also the name of {where} {first[scenario.name]}; "
                "scenario names must be unique",
                file=file,
                row=number,
                row_is_index=is_index,
                field="name",
            )
        first[scenario.name] = number


def _field(sample: Any, key: str) -> Any:
    return sample.get(key) if isinstance(sample, Mapping) else getattr(sample, key, None)


DEFAULT_PERSONA = "A user of the application who wants a clear, correct answer."


def scenarios_from_testset(
    testset: Any,
    *,
    personas: Iterable[Any] | None = None,
    persona: str | None = None,
    max_turns: int | None = None,
) -> list[Scenario]:
    """One scenario per test-set question: the goal is to get that question answered, the
    reference answer becomes the reference outcome, and the persona is the sample's persona.

    testset: an `assay.testset.Testset`, an `EvaluationDataset` of single-turn samples, or a list
        of samples or dicts with `user_input` (and optionally `reference`, `persona_name`).
    personas: the generator's `Persona` objects (name and role description), so a sample's
        `persona_name` becomes its full description; a name not among them is used as it is.
    persona: the persona of samples that name none (default: a plain user who wants an answer).
    """
    described = {
        str(getattr(item, "name", "")): f"{item.name}: {item.role_description}"
        for item in (personas or [])
        if getattr(item, "role_description", None)
    }
    scenarios = []
    for index, item in enumerate(testset):
        sample = getattr(item, "eval_sample", item)  # a TestsetSample holds its sample
        question = _field(sample, "user_input")
        if not isinstance(question, str) or not question.strip():
            raise DataError(
                "a test-set sample needs a question (user_input) to make a scenario",
                row=index,
                row_is_index=True,
                field="user_input",
            )
        name = _field(sample, "persona_name")
        who = described.get(name, name) if isinstance(name, str) and name else None
        reference = _field(sample, "reference")
        scenarios.append(
            Scenario(
                persona=who or persona or DEFAULT_PERSONA,
                goal=f"Get a correct, complete answer to this question: {question.strip()}",
                reference_outcome=(
                    f"The user is told: {reference.strip()}"
                    if isinstance(reference, str) and reference.strip()
                    else None
                ),
                name=f"testset-{index + 1}",
                max_turns=max_turns,
                metadata={"question": question},
            )
        )
    if not scenarios:
        raise DataError("the test set has no samples")
    return scenarios


__all__ = ["DEFAULT_PERSONA", "Scenario", "load_scenarios", "scenarios_from_testset"]
