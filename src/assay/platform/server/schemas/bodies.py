"""Request bodies, with a cap on every string and list. Strings may not hold NUL characters or lone
surrogates (PostgreSQL cannot store them), and unknown fields are refused, so a typo is a 422
naming the field rather than a value silently dropped."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
)

NAME_MAX = 200
SHORT_MAX = 1_000
TEXT_MAX = 20_000
FILE_MAX = 900_000  # characters of an imported file (the JSON API takes bodies up to 1 MB)
CONTEXT_MAX = 100_000
CONTEXTS_MAX = 100
EXAMPLES_MAX = 10_000
INT_MAX = 2**31 - 1


def _storable(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no lone surrogates)") from None
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


Name = Annotated[
    str,
    StringConstraints(max_length=NAME_MAX),
    AfterValidator(_storable),
    AfterValidator(_not_blank),
]
Short = Annotated[str, StringConstraints(max_length=SHORT_MAX), AfterValidator(_storable)]
LongText = Annotated[str, StringConstraints(max_length=TEXT_MAX), AfterValidator(_storable)]
Question = Annotated[
    str,
    StringConstraints(max_length=TEXT_MAX),
    AfterValidator(_storable),
    AfterValidator(_not_blank),
]


def _context(value: object) -> str | list[str]:
    """A string, or a list of at most CONTEXTS_MAX strings, each at most CONTEXT_MAX characters."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ValueError("must be a string or a list of strings")
    if len(items) > CONTEXTS_MAX:
        raise ValueError(f"must hold at most {CONTEXTS_MAX} passages, got {len(items)}")
    checked: list[str] = []
    for index, item in enumerate(items):
        where = "" if isinstance(value, str) else f"item {index} "
        if not isinstance(item, str):
            raise ValueError(f"{where}must be a string, got {type(item).__name__}")
        if len(item) > CONTEXT_MAX:
            raise ValueError(f"{where}must have at most {CONTEXT_MAX} characters")
        _storable(item)
        checked.append(item)
    return value if isinstance(value, str) else checked


GroundTruthContext = Annotated[object, AfterValidator(_context)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExampleIn(Body):
    question: Question
    ground_truth_context: GroundTruthContext = ""
    ground_truth_answer: LongText = ""


class DatasetIn(Body):
    name: Name
    source_type: Short = ""
    source_file: Short = ""
    questions_qty: Annotated[StrictInt, Field(ge=0, le=INT_MAX)] = 0
    examples: Annotated[list[ExampleIn], Field(max_length=EXAMPLES_MAX)] = []


class DatasetImportIn(Body):
    """A dataset file sent whole: its text, and what kind of file it is."""

    name: Name
    source_type: Literal["csv", "jsonl", "json"]
    source_file: Short = ""
    content: Annotated[str, StringConstraints(max_length=FILE_MAX)]


class TaskIn(Body):
    name: Name
    generator_model: Short = ""
    system_prompt: LongText = ""


class CriteriaIn(Body):
    name: Name
    phase: Short = ""
    description: LongText = ""
    prompt: LongText = ""
    bool_true: LongText = ""
    bool_false: LongText = ""
    output_type: Short = ""
    header: LongText = ""
    likert_score_1: LongText = ""
    likert_score_2: LongText = ""
    likert_score_3: LongText = ""
    likert_score_4: LongText = ""
    likert_score_5: LongText = ""
    criteria_type: Short = "llm_judge"
    function_name: Short = ""
    match_type: Short = ""
    match_pattern: Annotated[
        str, StringConstraints(max_length=2_000), AfterValidator(_storable)
    ] = ""
    test_string: LongText = ""
    validation_status: Short = ""  # ignored: computed by the server
    case_sensitive: StrictBool = False


class CohortIn(Body):
    name: Name
    generator_model: Short | None = None
    rag_pipeline: Short | None = None
    system_prompt: LongText | None = None


Ident = Annotated[StrictInt, Field(ge=1, le=INT_MAX)]


class ExperimentIn(Body):
    name: Name
    dataset_id: Ident
    dataset_version: Ident | None = None
    task_id: Ident
    cohorts: Annotated[list[CohortIn], Field(min_length=1, max_length=20)]
    criteria_ids: Annotated[list[Ident], Field(min_length=1, max_length=50)]
    judge_model: Short = ""


RETENTION_DAYS_MAX = 36_500  # a hundred years: a longer horizon is a typo, not a policy


class ProjectSettingsIn(Body):
    """`PATCH /api/v1/project/settings`: a field left out is left as it is. `retention_days`: how
    many days the project's traces are kept, or null for the server's default."""

    retention_days: Annotated[StrictInt, Field(ge=1, le=RETENTION_DAYS_MAX)] | None = None


__all__ = [
    "INT_MAX",
    "RETENTION_DAYS_MAX",
    "CohortIn",
    "CriteriaIn",
    "DatasetIn",
    "ExampleIn",
    "ExperimentIn",
    "ProjectSettingsIn",
    "TaskIn",
]
