"""`EvaluationDataset`: a homogeneous list of samples, read from and written to common formats."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from assay._util.deps import require
from assay.errors import DataError
from assay.schema.rows import RowLocation, build_sample, normalise_column_map, prepare_row
from assay.schema.samples import MultiTurnSample, Sample, SingleTurnSample

SampleKind = Literal["single_turn", "multi_turn"]


class EvaluationDataset(Sequence[Sample]):
    """Samples of one kind: all single-turn or all multi-turn."""

    def __init__(self, samples: Iterable[Sample], *, name: str | None = None) -> None:
        self.samples: list[Sample] = list(samples)
        self.name = name
        first_type: type | None = None
        for index, sample in enumerate(self.samples):
            if not isinstance(sample, (SingleTurnSample, MultiTurnSample)):
                raise DataError(
                    f"expected a SingleTurnSample or MultiTurnSample, got {type(sample).__name__}",
                    row=index,
                    row_is_index=True,
                )
            if first_type is None:
                first_type = type(sample)
            elif type(sample) is not first_type:
                raise DataError(
                    f"sample is a {type(sample).__name__} but the dataset holds {first_type.__name__}s; "
                    "a dataset must not mix single-turn and multi-turn samples",
                    row=index,
                    row_is_index=True,
                )

    # -- sequence protocol -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> EvaluationDataset: ...
    def __getitem__(self, index: int | slice) -> Sample | EvaluationDataset:
        if isinstance(index, slice):
            return EvaluationDataset(self.samples[index], name=self.name)
        return self.samples[index]

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __repr__(self) -> str:
        return f"EvaluationDataset(features={self.features()}, len={len(self)})"

    @property
    def kind(self) -> SampleKind:
        if self.samples and isinstance(self.samples[0], MultiTurnSample):
            return "multi_turn"
        return "single_turn"

    def extra_columns(self) -> list[str]:
        """Names kept in samples' `metadata` (input columns that are not sample fields)."""
        return list(dict.fromkeys(key for sample in self.samples for key in (sample.metadata or {})))

    def features(self) -> list[str]:
        """Fields set on any sample, in schema order."""
        present = {name for sample in self.samples for name in sample.get_features()}
        model = MultiTurnSample if self.kind == "multi_turn" else SingleTurnSample
        return [name for name in model.model_fields if name in present]

    # -- lists of dicts ----------------------------------------------------------------
    @classmethod
    def from_list(
        cls,
        rows: Iterable[Mapping[str, Any]],
        *,
        column_map: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> EvaluationDataset:
        """Build from dicts. Legacy names (question, answer, contexts, ground_truth) are mapped."""
        return cls._from_rows(
            ((index, row) for index, row in enumerate(rows)), file=None, column_map=column_map, name=name
        )

    from_dict = from_list

    def to_list(self) -> list[dict[str, Any]]:
        return [sample.to_dict() for sample in self.samples]

    # -- files ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        """Read a `.jsonl`, `.json` (a list of objects) or `.csv` file, chosen by extension."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in {".jsonl", ".ndjson"}:
            return cls.from_jsonl(path, column_map=column_map)
        if suffix == ".csv":
            return cls.from_csv(path, column_map=column_map)
        if suffix == ".json":
            return cls.from_json(path, column_map=column_map)
        raise DataError(f"unsupported file type {suffix!r}; use .jsonl, .json or .csv", file=str(path))

    @classmethod
    def from_jsonl(cls, path: str | Path, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        path = Path(path)

        def rows() -> Iterator[tuple[int, Any]]:
            for line_number, line in enumerate(_open_text(path), start=1):
                if not line.strip():
                    continue
                try:
                    yield line_number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", file=str(path), row=line_number) from None

        return cls._from_rows(rows(), file=str(path), column_map=column_map, name=path.stem)

    @classmethod
    def from_json(cls, path: str | Path, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        path = Path(path)
        try:
            data = json.loads("".join(_open_text(path)))
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg} at line {exc.lineno})", file=str(path)) from None
        if not isinstance(data, list):
            raise DataError("a .json dataset must be a list of objects", file=str(path))
        return cls._from_rows(enumerate(data, start=1), file=str(path), column_map=column_map, name=path.stem)

    @classmethod
    def from_csv(cls, path: str | Path, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        """Read CSV; list and object columns hold JSON (Python literals, as Ragas writes, also work)."""
        path = Path(path)
        reader = csv.DictReader(_open_text(path))
        rows = ((number, row) for number, row in enumerate(reader, start=1))
        return cls._from_rows(rows, file=str(path), column_map=column_map, name=path.stem, text_cells=True)

    def to_jsonl(self, path: str | Path) -> None:
        with Path(path).open("w", encoding="utf-8") as handle:
            for row in self.to_list():
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def to_csv(self, path: str | Path) -> None:
        """Write CSV with list and object cells as JSON text (read back by `from_csv`)."""
        rows = self.to_list()
        columns = list(dict.fromkeys(key for row in rows for key in row))
        with Path(path).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {
                        key: json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
                        for key, value in row.items()
                    }
                )

    # -- dataframes ----------------------------------------------------------------------
    @classmethod
    def from_pandas(cls, frame: Any, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        records = frame.to_dict(orient="records")
        return cls._from_rows(
            ((index, _drop_missing(row)) for index, row in enumerate(records)), file=None, column_map=column_map
        )

    def to_pandas(self) -> Any:
        pd = require("pandas", extra="pandas", feature="EvaluationDataset.to_pandas")
        return pd.DataFrame(self.to_list())

    @classmethod
    def from_hf_dataset(cls, dataset: Any, *, column_map: Mapping[str, str] | None = None) -> EvaluationDataset:
        # Arrow gives every row every column and every struct every key, filling gaps with None.
        return cls.from_list([_drop_nones(row) for row in dataset.to_list()], column_map=column_map)

    def to_hf_dataset(self) -> Any:
        datasets = require("datasets", extra="hf", feature="EvaluationDataset.to_hf_dataset")
        rows = self.to_list()
        # from_list takes its columns from the first row alone, so give every row every column.
        columns = list(dict.fromkeys(key for row in rows for key in row))
        return datasets.Dataset.from_list([{key: row.get(key) for key in columns} for row in rows])

    # -- shared row path -----------------------------------------------------------------
    @classmethod
    def _from_rows(
        cls,
        numbered_rows: Iterable[tuple[int, Any]],
        *,
        file: str | None,
        column_map: Mapping[str, str] | None,
        name: str | None = None,
        text_cells: bool = False,
    ) -> EvaluationDataset:
        renames = normalise_column_map(column_map)
        samples: list[Sample] = []
        for number, raw in numbered_rows:
            where = RowLocation(file=file, row=number, is_index=file is None)
            sample = build_sample(prepare_row(raw, where, renames, text_cells=text_cells), where)
            if samples and type(sample) is not type(samples[0]):
                raise where.error(
                    f"this row is a {type(sample).__name__} but earlier rows are "
                    f"{type(samples[0]).__name__}s; a dataset must not mix single-turn and multi-turn rows",
                    "user_input",
                )
            samples.append(sample)
        return cls(samples, name=name)


def _open_text(path: Path) -> Iterator[str]:
    try:
        # utf-8-sig also reads files that start with a byte-order mark (Excel's CSV export).
        handle = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise DataError("file not found", file=str(path)) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a data file", file=str(path)) from None
    with handle:
        try:
            yield from handle
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text ({exc.reason})", file=str(path)) from None


def _drop_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _drop_nones(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_drop_nones(item) for item in value]
    return value


def _drop_missing(row: dict[str, Any]) -> dict[str, Any]:
    """pandas fills absent cells with NaN/None; those mean 'not set', not a value."""
    clean = {}
    for key, value in row.items():
        if value is None or (isinstance(value, float) and value != value):
            continue
        if hasattr(value, "tolist"):  # numpy arrays from parquet / HF round trips
            value = value.tolist()
        clean[key] = value
    return clean


__all__ = ["EvaluationDataset"]
