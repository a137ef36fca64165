"""Human labels in: labelled rows from JSONL/CSV/JSON files, Ragas annotation files and the
platform's review-queue exports, all read into one `LabeledSet`, and its grouped, stratified split.

A labelled row is the metric's input fields (`user_input`, `response`, `retrieved_contexts`, ... or a
template's placeholders), the reviewer's `label`, optionally their `reason`, a `group` (rows of one
source document or trace share one; a group never straddles two splits) and an `id`.
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.errors import DataError, UsageError
from assay.schema.rows import RowLocation, build_sample, prepare_row
from assay.schema.strict_text import csv_records, strict_json

LABEL_COLUMNS = ("label", "human_label", "gold", "target")


@dataclass(frozen=True)
class LabeledExample:
    """One row a person judged."""

    id: str
    fields: dict[str, Any]
    label: Any
    reason: str | None = None
    group: str | None = None
    author: str | None = None
    judge_value: Any = None  # what a judge said before (a review queue's score), if known
    judge_reason: str | None = None

    @property
    def group_key(self) -> str:
        return self.group if self.group is not None else f"row:{self.id}"


@dataclass
class LabeledSet(Sequence[LabeledExample]):
    """Labelled rows, in order, with where they came from."""

    examples: list[LabeledExample]
    source: str = "labels"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        ids = Counter(example.id for example in self.examples)
        twice = sorted(key for key, count in ids.items() if count > 1)
        if twice:
            raise DataError(f"{self.source}: row id {twice[0]!r} appears {ids[twice[0]]} times")

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return LabeledSet(self.examples[index], self.source, list(self.notes))
        return self.examples[index]

    def __iter__(self) -> Iterator[LabeledExample]:
        return iter(self.examples)

    @property
    def labels(self) -> list[Any]:
        return [example.label for example in self.examples]

    def label_counts(self) -> dict[str, int]:
        return dict(Counter(json.dumps(label) for label in self.labels))

    def train_test_split(
        self, test_size: float = 0.2, seed: int = 42, stratify: bool = True
    ) -> tuple[LabeledSet, LabeledSet]:
        return train_test_split(self, test_size=test_size, seed=seed, stratify=stratify)


def _label_key(label: Any) -> str:
    return json.dumps(label, sort_keys=True)


def train_test_split(
    data: LabeledSet | Iterable[LabeledExample],
    test_size: float = 0.2,
    seed: int = 42,
    stratify: bool = True,
) -> tuple[LabeledSet, LabeledSet]:
    """(train, test): whole groups go to one side; with `stratify`, each label's share of the test
    side is as close to `test_size` as whole groups allow. Seeded: the same call gives the same
    split. Groups are placed largest first (in a seeded order among equals), each where it brings
    the test side's label counts nearer their targets."""
    rows = data if isinstance(data, LabeledSet) else LabeledSet(list(data))
    if not 0 < test_size < 1:
        raise UsageError(f"test_size must be between 0 and 1 (exclusive), got {test_size!r}")
    groups: dict[str, list[LabeledExample]] = {}
    for example in rows:
        groups.setdefault(example.group_key, []).append(example)
    if len(groups) < 2:
        raise UsageError(
            f"{rows.source}: a split needs at least 2 groups; all {len(rows)} rows are in one"
        )
    totals = Counter(_label_key(example.label) for example in rows)
    target = {label: count * test_size for label, count in totals.items()}
    target_rows = len(rows) * test_size
    order = list(groups)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda key: -len(groups[key]))  # stable: the shuffle breaks ties
    in_test: Counter[str] = Counter()
    test_keys: set[str] = set()
    test_rows = 0
    for key in order:
        counts = Counter(_label_key(example.label) for example in groups[key])
        if stratify:
            before = sum(abs(in_test[label] - target[label]) for label in counts)
            after = sum(abs(in_test[label] + n - target[label]) for label, n in counts.items())
            # a tie between taking and leaving goes to taking while the test side is short
            take = after < before or (
                after == before and test_rows + len(groups[key]) <= target_rows
            )
        else:
            take = abs(test_rows + len(groups[key]) - target_rows) < abs(test_rows - target_rows)
        if take:
            test_keys.add(key)
            in_test.update(counts)
            test_rows += len(groups[key])
    if not test_keys:  # a tiny set: the smallest group goes to test so both sides exist
        test_keys.add(order[-1])
    if len(test_keys) == len(groups):
        test_keys.discard(order[0])
    train = [example for example in rows if example.group_key not in test_keys]
    test = [example for example in rows if example.group_key in test_keys]
    note = f"split with test_size={test_size}, seed={seed}, {len(groups)} groups"
    return (
        LabeledSet(train, f"{rows.source} (train)", [*rows.notes, note]),
        LabeledSet(test, f"{rows.source} (test)", [*rows.notes, note]),
    )


# -- reading rows ----------------------------------------------------------------------------
def from_rows(
    rows: Iterable[dict[str, Any]],
    *,
    label_column: str | None = None,
    reason_column: str = "reason",
    group_column: str | None = None,
    id_column: str = "id",
    source: str = "labels",
    text_cells: bool = False,
    first_row: int = 0,
) -> LabeledSet:
    """Labelled rows from dicts: the label column (default: the first of `label`, `human_label`,
    `gold`, `target` present), optional reason/group/id columns, and the metric's input fields
    (legacy column names understood; other columns kept, e.g. a template's placeholders)."""
    examples = []
    file = None if source == "labels" else source
    for position, raw in enumerate(rows):
        number = position + first_row
        where = RowLocation(file, number, is_index=file is None)
        if not isinstance(raw, dict):
            raise where.error(f"a labelled row must be an object, got {type(raw).__name__}")
        row = dict(raw)
        column = label_column or next((c for c in LABEL_COLUMNS if c in row), None)
        if column is None or row.get(column) in (None, ""):
            raise where.error(
                f"no label: expected a {label_column or ' / '.join(LABEL_COLUMNS)} column",
                label_column or "label",
            )
        label = _parse_label(row.pop(column), text_cells)
        reason = row.pop(reason_column, None) or None
        group = row.pop(group_column, None) if group_column else None
        if group_column and group in (None, ""):
            raise where.error(f"no group: the {group_column} column is empty", group_column)
        row_id = row.pop(id_column, None)
        prepared = prepare_row(row, where, {}, text_cells=text_cells)
        # Validated as a sample (a string where contexts belong is a DataError naming the field);
        # a conversation's messages come back as message objects, as metrics expect them.
        sample = build_sample(dict(prepared), where)
        metadata = prepared.pop("metadata", {}) or {}
        fields = {**metadata, **{key: sample.get(key) for key in prepared}}
        if not fields:
            raise where.error("the row has a label but no input fields")
        examples.append(
            LabeledExample(
                id=str(row_id) if row_id not in (None, "") else f"row{number}",
                fields=fields,
                label=label,
                reason=str(reason) if reason is not None else None,
                group=str(group) if group not in (None, "") else None,
            )
        )
    if not examples:
        raise DataError(f"{source}: no labelled rows")
    return LabeledSet(examples, source)


def _parse_label(value: Any, text_cells: bool) -> Any:
    if text_cells and isinstance(value, str):
        try:
            return json.loads(value)  # "1", "0.5", "true", '["a","b"]'
        except json.JSONDecodeError:
            return value.strip()
    return value


EXPORT_KEYS = frozenset({"trace_id", "criterion", "label", "output"})


def is_review_export_row(row: Any) -> bool:
    """A row of a review-queue export (the API's `rows`, or the list `ReviewQueue.export()` gives)."""
    return isinstance(row, dict) and set(row) >= EXPORT_KEYS


def from_review_export(
    data: dict[str, Any] | list[Any],
    *,
    criterion: str | None = None,
    source: str = "review export",
    first_row: int = 0,
) -> LabeledSet:
    """The platform's review-queue export: the API's page `{"rows": [...], "next_cursor"}` or the
    list of rows `ReviewQueue.export()` returns, each `{trace_id, input, output, contexts,
    criterion, label, label_author, label_at, score, score_status, score_source}`. One trace is
    one group; the judge's earlier score (when it was ok) comes along as `judge_value`, a label's
    comment (when the export carries one) as the reviewer's reason. An export with several
    criteria needs `criterion`. A page with a `next_cursor` is not the whole queue: it is read,
    and the notes say so."""
    notes: list[str] = []
    if isinstance(data, dict):
        rows = data.get("rows")
        if data.get("next_cursor"):
            notes.append(
                f"{source} is one page of the export (next_cursor {data['next_cursor']!r}): "
                "rows after it are not included; ReviewQueue.export() fetches every page"
            )
    else:
        rows = data
    if not isinstance(rows, list):
        raise DataError(f"{source}: 'rows' must be a list", field="rows")
    criteria = sorted({str(row.get("criterion")) for row in rows if isinstance(row, dict)})
    if criterion is None and len(criteria) > 1:
        raise UsageError(
            f"{source} holds labels for several criteria ({', '.join(criteria)}); pick one with criterion="
        )
    file = None if source == "review export" else source
    examples = []
    for index, row in enumerate(rows):
        number = index + first_row
        where = RowLocation(file, number, is_index=first_row == 0)
        if not isinstance(row, dict):
            raise where.error(f"a row must be an object, got {type(row).__name__}")
        if criterion is not None and str(row.get("criterion")) != criterion:
            continue
        for key in ("trace_id", "label"):
            if row.get(key) in (None, ""):
                raise where.error(f"{key} is missing", key)
        output = row.get("output")
        if not isinstance(output, str) or not output.strip():
            raise where.error("output is missing or empty: nothing was judged", "output")
        fields: dict[str, Any] = {"response": output}
        if isinstance(row.get("input"), str) and row["input"].strip():
            fields["user_input"] = row["input"]
        if row.get("contexts") is not None:
            contexts = row["contexts"]
            if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
                raise where.error("contexts must be a list of strings", "contexts")
            fields["retrieved_contexts"] = contexts
        score_ok = row.get("score_status") in (None, "ok")
        reason = row.get("label_comment") or row.get("comment")
        examples.append(
            LabeledExample(
                id=f"{row['trace_id']}:{row.get('criterion')}",
                fields=fields,
                label=row["label"],
                reason=str(reason) if reason else None,
                group=str(row["trace_id"]),
                author=row.get("label_author"),
                # a number (booleans as 1.0/0.0), else the judge's categorical label
                judge_value=(
                    (row["score"] if row.get("score") is not None else row.get("score_label"))
                    if score_ok
                    else None
                ),
                judge_reason=row.get("score_reason") if score_ok else None,
            )
        )
    if not examples:
        raise DataError(f"{source}: no rows for criterion {criterion!r} (it has {criteria})")
    return LabeledSet(examples, source, notes)


def load_labels(
    path: str | Path,
    *,
    label_column: str | None = None,
    reason_column: str = "reason",
    group_column: str | None = None,
    metric_name: str | None = None,
    criterion: str | None = None,
) -> LabeledSet:
    """Read labels from a file: `.jsonl` / `.csv` rows with a label column, a `.json` list of such
    rows, a review-queue export (the API's `{"rows": [...]}` page, or `ReviewQueue.export()`'s
    list saved as .json or .jsonl: recognised by its keys), or a Ragas annotation file
    (`{metric: [{metric_input, metric_output, prompts, is_accepted}]}`, pick one with `metric_name`)."""
    source = Path(path)
    options: dict[str, Any] = {
        "label_column": label_column,
        "reason_column": reason_column,
        "group_column": group_column,
        "source": str(source),
    }
    try:
        text = source.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read labels from {source}: {exc}") from exc
    suffix = source.suffix.lower()
    if suffix == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(strict_json(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"not JSON: {exc.msg}", file=str(source), row=number) from None
            except ValueError as exc:  # a key given twice
                raise DataError(str(exc), file=str(source), row=number) from None
        if rows and all(is_review_export_row(row) for row in rows):
            return from_review_export(rows, criterion=criterion, source=str(source), first_row=1)
        return from_rows(rows, **options, first_row=1)
    if suffix == ".csv":
        records = csv_records(io.StringIO(text, newline=""), file=str(source), first_row=2)
        return from_rows([row for _, row in records], **options, text_cells=True, first_row=2)
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"not JSON: {exc.msg} (line {exc.lineno})", file=str(source)) from None
        if isinstance(data, list) and data and all(is_review_export_row(row) for row in data):
            return from_review_export(data, criterion=criterion, source=str(source))
        if isinstance(data, list):
            return from_rows(data, **options)
        if isinstance(data, dict) and "rows" in data:
            return from_review_export(data, criterion=criterion, source=str(source))
        if isinstance(data, dict):
            from assay.alignment.annotations import MetricAnnotation

            annotation = MetricAnnotation.from_dict(data, metric_name, source=str(source))
            return annotation.to_labeled()
        raise DataError(f"{source}: expected a list of rows or an object", file=str(source))
    raise UsageError(f"labels must be a .jsonl, .csv or .json file, got {source.name}")


def as_labeled(data: Any, *, source: str = "labels") -> LabeledSet:
    """Whatever a caller hands `align` as labels: a LabeledSet, a path, a Ragas annotation, or a
    list of row dicts / LabeledExamples."""
    if isinstance(data, LabeledSet):
        return data
    if isinstance(data, (str, Path)):
        return load_labels(data)
    to_labeled = getattr(data, "to_labeled", None)
    if callable(to_labeled):
        return to_labeled()
    if isinstance(data, (list, tuple)):
        if all(isinstance(item, LabeledExample) for item in data):
            return LabeledSet(list(data), source)
        return from_rows(list(data), source=source)
    raise UsageError(
        f"labels must be a LabeledSet, a file path, an annotation or a list of rows, got {type(data).__name__}"
    )


def relabel(data: LabeledSet, mapping: dict[Any, Any]) -> LabeledSet:
    """The same rows with labels mapped (`{"good": 1, "bad": 0}`); unmapped labels stay."""
    if not mapping:
        return data
    return LabeledSet(
        [replace(example, label=mapping.get(example.label, example.label)) for example in data],
        data.source,
        data.notes,
    )


__all__ = [
    "LabeledExample",
    "LabeledSet",
    "as_labeled",
    "from_review_export",
    "from_rows",
    "is_review_export_row",
    "load_labels",
    "relabel",
    "train_test_split",
]
