"""`EvaluationDataset`: a homogeneous list of samples, read from and written to common formats."""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal, overload

from assay._util.deps import require
from assay.errors import DataError, UsageError
from assay.schema.raw_rows import IS_A_DIRECTORY, csv_rows, jsonl_rows, open_text, too_deep_element
from assay.schema.rows import (
    RowLocation,
    build_sample,
    normalise_column_map,
    prepare_row,
    too_deep,
)
from assay.schema.samples import MultiTurnSample, Sample, SingleTurnSample
from assay.schema.strict_text import strict_json

SampleKind = Literal["single_turn", "multi_turn"]

_FILE_TYPES = "use .jsonl (one object per line), .json (a list of objects) or .csv"
# The files a run can read a piece at a time (`iter_file`); a .json array is read whole.
STREAMED_SUFFIXES = frozenset({".jsonl", ".ndjson", ".csv"})


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
        return list(
            dict.fromkeys(key for sample in self.samples for key in (sample.metadata or {}))
        )

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
            ((index, row) for index, row in enumerate(rows)),
            file=None,
            column_map=column_map,
            name=name,
        )

    from_dict = from_list

    def to_list(self) -> list[dict[str, Any]]:
        return [sample.to_dict() for sample in self.samples]

    # -- files ---------------------------------------------------------------------------
    @classmethod
    def load(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
        """Read a `.jsonl`, `.json` (a list of objects) or `.csv` file, chosen by extension."""
        path = Path(path)
        if path.is_dir():
            raise DataError(IS_A_DIRECTORY, file=str(path))
        if not path.exists():
            raise DataError("file not found", file=str(path))
        suffix = path.suffix.lower()
        if suffix in {".jsonl", ".ndjson"}:
            return cls.from_jsonl(path, column_map=column_map)
        if suffix == ".csv":
            return cls.from_csv(path, column_map=column_map)
        if suffix == ".json":
            return cls.from_json(path, column_map=column_map)
        if not suffix:
            raise DataError(
                f"unsupported file type (the name has no file extension); {_FILE_TYPES}",
                file=str(path),
            )
        raise DataError(f"unsupported file type {suffix!r}; {_FILE_TYPES}", file=str(path))

    @classmethod
    def from_jsonl(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
        path = Path(path)
        return cls._from_rows(
            jsonl_rows(path), file=str(path), column_map=column_map, name=path.stem
        )

    @classmethod
    def iter_jsonl(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None, size: int = 1000
    ) -> Iterator[EvaluationDataset]:
        """A .jsonl file as datasets of at most `size` rows, read as they are asked for: a run
        over a file larger than memory holds one of them at a time. The rows are read and
        checked exactly as `from_jsonl` reads them, and the checks over the whole file (one kind of
        sample, every `column_map` column present in some row) hold across the pieces."""
        path = Path(path)
        return cls._iter_pieces(jsonl_rows(path), path, column_map, size, text_cells=False)

    @classmethod
    def iter_csv(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None, size: int = 1000
    ) -> Iterator[EvaluationDataset]:
        """A .csv file as datasets of at most `size` rows, as `iter_jsonl` reads a .jsonl file.
        The rows pass the same strict reader as `from_csv` (`strict_text.csv_records`) and their
        cells are typed by the same rule, so the pieces joined are `from_csv`'s dataset. Faults the
        reader finds only at the end (a quote never closed, a header with no rows) are raised when
        the last piece is asked for: a caller that must refuse a bad file before any work reads
        the pieces once first, as `engine/stream_run.py` does."""
        path = Path(path)
        return cls._iter_pieces(csv_rows(path), path, column_map, size, text_cells=True)

    @classmethod
    def iter_file(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None, size: int = 1000
    ) -> Iterator[EvaluationDataset]:
        """`iter_jsonl` or `iter_csv`, chosen by the extension as `load` chooses. A .json file (one
        array) is a `UsageError`: it can only be read whole (`from_json`)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".csv":
            return cls.iter_csv(path, column_map=column_map, size=size)
        if suffix in STREAMED_SUFFIXES:
            return cls.iter_jsonl(path, column_map=column_map, size=size)
        raise UsageError(
            f"{path}: only .jsonl and .csv files are read a piece at a time; "
            "load a .json array whole with EvaluationDataset.load"
        )

    @classmethod
    def _iter_pieces(
        cls,
        rows: Iterator[tuple[int, Any]],
        path: Path,
        column_map: Mapping[str, str] | None,
        size: int,
        *,
        text_cells: bool,
    ) -> Iterator[EvaluationDataset]:
        """Numbered raw rows as datasets of at most `size` rows; what `_from_rows` checks over
        a whole dataset (one kind of sample, the `column_map` columns) is checked across them."""
        renames = normalise_column_map(column_map)
        columns: dict[str, None] = {}
        kind: type[Sample] | None = None
        while True:
            numbered = list(itertools.islice(rows, size))
            if not numbered:
                break
            if renames:
                for _, raw in numbered:
                    if isinstance(raw, Mapping):
                        columns.update(dict.fromkeys(str(column) for column in raw))
            piece = cls._from_rows(
                numbered,
                file=str(path),
                column_map=column_map,
                name=path.stem,
                text_cells=text_cells,
                whole=False,
            )
            if kind is None:
                kind = type(piece.samples[0])
            elif type(piece.samples[0]) is not kind:
                raise DataError(
                    f"this row is a {type(piece.samples[0]).__name__} but earlier rows are "
                    f"{kind.__name__}s; a dataset must not mix single-turn and multi-turn rows",
                    file=str(path),
                    row=numbered[0][0],
                )
            yield piece
        _check_mapped_columns(renames, columns, str(path), any_rows=kind is not None)

    @classmethod
    def from_json(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
        path = Path(path)
        text = "".join(open_text(path))
        try:
            data = strict_json(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"not valid JSON ({exc.msg} at line {exc.lineno})", file=str(path)
            ) from None
        except RecursionError:
            raise DataError(too_deep(), file=str(path), row=too_deep_element(text)) from None
        except ValueError as exc:  # a repeated key
            raise DataError(str(exc), file=str(path)) from None
        if not isinstance(data, list):
            raise DataError("a .json dataset must be a list of objects", file=str(path))
        return cls._from_rows(
            enumerate(data, start=1), file=str(path), column_map=column_map, name=path.stem
        )

    @classmethod
    def from_csv(
        cls, path: str | Path, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
        """Read CSV; list and object columns hold JSON (Python literals, as Ragas writes, also work)."""
        path = Path(path)
        return cls._from_rows(
            csv_rows(path), file=str(path), column_map=column_map, name=path.stem, text_cells=True
        )

    def to_jsonl(self, path: str | Path) -> None:
        """Write one JSON object per row; the file appears complete or not at all."""
        with atomic_open(path) as handle:
            for row in self.to_list():
                handle.write(json_line(row))

    def to_csv(self, path: str | Path) -> None:
        """Write CSV with list and object cells as JSON text (read back by `from_csv`)."""
        rows = self.to_list()
        columns = list(dict.fromkeys(key for row in rows for key in row))
        cells = []
        for index, row in enumerate(rows):
            cells.append({key: _csv_cell(key, value, index) for key, value in row.items()})
        with atomic_open(path, newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(cells)

    # -- dataframes ----------------------------------------------------------------------
    @classmethod
    def from_pandas(
        cls, frame: Any, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
        records = frame.to_dict(orient="records")
        return cls._from_rows(
            ((index, _drop_missing(row)) for index, row in enumerate(records)),
            file=None,
            column_map=column_map,
        )

    def to_pandas(self) -> Any:
        pd = require("pandas", extra="pandas", feature="EvaluationDataset.to_pandas")
        return pd.DataFrame(self.to_list())

    @classmethod
    def from_hf_dataset(
        cls, dataset: Any, *, column_map: Mapping[str, str] | None = None
    ) -> EvaluationDataset:
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
        whole: bool = True,
    ) -> EvaluationDataset:
        renames = normalise_column_map(column_map)
        samples: list[Sample] = []
        columns: dict[str, None] = {}  # every column seen, in order of first appearance
        for number, raw in numbered_rows:
            where = RowLocation(file=file, row=number, is_index=file is None)
            prepared = prepare_row(raw, where, renames, text_cells=text_cells)
            if renames:
                columns.update(dict.fromkeys(str(column) for column in raw))
            sample = build_sample(prepared, where)
            if samples and type(sample) is not type(samples[0]):
                raise where.error(
                    f"this row is a {type(sample).__name__} but earlier rows are "
                    f"{type(samples[0]).__name__}s; a dataset must not mix single-turn and multi-turn rows",
                    "user_input",
                )
            samples.append(sample)
        if whole:
            _check_mapped_columns(renames, columns, file, any_rows=bool(samples))
        return cls(samples, name=name)


def _check_mapped_columns(
    renames: Mapping[str, str], columns: Mapping[str, None], file: str | None, *, any_rows: bool
) -> None:
    absent = [column for column in renames if column not in columns]
    if any_rows and absent:
        in_file = f" of {file}" if file else ""
        raise UsageError(
            f"column_map names the column {absent[0]!r}, which no row{in_file} has "
            f"(columns present: {', '.join(columns)})"
        )


def json_line(value: Any) -> str:
    """One JSON line, non-ASCII text kept readable. Text UTF-8 cannot encode (a lone surrogate,
    which a valid `"\\udcff"` escape produces) is written as JSON escapes, which read back identically."""
    line = json.dumps(value, ensure_ascii=False)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = json.dumps(value, ensure_ascii=True)
    return line + "\n"


@contextlib.contextmanager
def atomic_open(path: str | Path, *, newline: str | None = None) -> Iterator[IO[str]]:
    """Open a UTF-8 text file for writing that appears at `path` complete or not at all: it is written
    to a temporary file in the same directory and renamed over `path` only once everything is written."""
    path = Path(path)
    if path.is_symlink():  # write the file the link points to, and keep the link
        path = path.resolve()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666 lets the umask decide the permissions, as for an ordinary new file.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _csv_cell(column: str, value: Any, index: int) -> Any:
    if isinstance(value, (list, dict)):
        return json_line(value)[:-1]  # JSON escapes keep any text, and from_csv decodes them
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataError(
                f"{column} holds text that UTF-8 cannot store ({value[exc.start]!r}, a lone surrogate), so a CSV "
                "file cannot keep it; write the dataset with to_jsonl, which escapes it",
                row=index,
                field=column,
                row_is_index=True,
            ) from None
    return value


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


# Ragas' base of its datasets (samples of one type, to_list / from_list, pandas and HF conversions):
# here every one of those is EvaluationDataset's.
RagasDataset = EvaluationDataset

__all__ = ["EvaluationDataset", "RagasDataset"]
