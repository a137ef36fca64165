"""What generation produces: `Testset`, its samples with their provenance, and the report.

A `TestsetSample` is an `assay.schema.SingleTurnSample` (question, reference contexts with their
chunk ids, reference answer, persona, style, length) plus the synthesizer's name and its
`Provenance`: where it came from (document and chunk ids, the verbatim evidence quotes), how it
was made (synthesizer, persona, style, language, seed terms) and what the quality gate measured.

`Testset.save(path)` writes JSON Lines, one sample a line (`to_list()` rows); `Testset.load`
reads them back. The rows are also plain evaluation rows: `EvaluationDataset.from_jsonl` reads
them, unknown columns going into metadata. The `GenerationReport` (sizes asked and made, shares
handed between synthesizers, rejected candidates with reasons, failures, coverage, calls) is
saved beside it by `save_report`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay.compat.ragas.cost import TokenUsage
from assay.errors import DataError
from assay.schema.dataset import EvaluationDataset
from assay.schema.samples import MultiTurnSample, SingleTurnSample
from assay.schema.usage import Usage


class Provenance(BaseModel):
    document_ids: list[str] = Field(default_factory=list)
    chunk_ids: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    synthesizer: str = ""
    persona: str | None = None
    style: str | None = None
    length: str | None = None
    language: str | None = None
    terms: list[str] = Field(default_factory=list)
    gate: dict[str, Any] = Field(default_factory=dict)
    candidate: str | None = None  # the scenario's key (checkpoints and resuming use it)


class TestsetSample(BaseModel):
    __test__ = False  # not a pytest class

    eval_sample: SingleTurnSample | MultiTurnSample
    synthesizer_name: str
    provenance: Provenance | None = None


class RejectedCandidate(BaseModel):
    """A candidate the gate refused (or whose calls failed), kept with the reason."""

    candidate: str
    synthesizer: str
    reason: str
    kind: str = "rejected"  # "rejected" by the gate, or "failed" (a model call failed)
    user_input: str | None = None
    reference: str | None = None
    gate: dict[str, Any] = Field(default_factory=dict)


class Reassignment(BaseModel):
    """Samples one synthesizer could not make, handed to others."""

    synthesizer: str
    samples: int
    to: dict[str, int] = Field(default_factory=dict)
    reason: str


class GenerationReport(BaseModel):
    requested: int
    produced: int = 0
    requested_split: dict[str, int] = Field(default_factory=dict)
    produced_split: dict[str, int] = Field(default_factory=dict)
    reassigned: list[Reassignment] = Field(default_factory=list)
    shortfall: int = 0
    shortfall_reasons: list[str] = Field(default_factory=list)
    rejected: list[RejectedCandidate] = Field(default_factory=list)
    candidates_tried: int = 0
    candidate_budget: int = 0
    failures: list[dict[str, Any]] = Field(default_factory=list)  # transforms and personas
    notes: list[str] = Field(default_factory=list)
    documents: int = 0
    documents_seeded: int = 0
    language: str | None = None
    calls: dict[str, int] = Field(default_factory=dict)  # per stage: LLM and embedding requests
    seconds: dict[str, float] = Field(default_factory=dict)
    resumed_samples: int = 0

    @property
    def coverage(self) -> float:
        """Share of documents that seeded at least one kept sample."""
        return self.documents_seeded / self.documents if self.documents else 0.0

    def rejection_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in self.rejected:
            key = item.reason.split(":", 1)[0]
            counts[key] = counts.get(key, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        return {
            **self.model_dump(mode="json", exclude={"rejected"}),
            "coverage": round(self.coverage, 4),
            "rejections": self.rejection_counts(),
        }


_NOT_METERED = (
    "The Testset was not configured for computing cost: it was loaded from a file, which keeps "
    "no usage. Generate it again, or pass cost_per_input_token and cost_per_output_token with "
    "token counts you know."
)


class Testset(BaseModel):
    __test__ = False

    samples: list[TestsetSample]
    run_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    usage: Usage | None = None  # what every model call of the generation used (None: unknown)
    report: GenerationReport | None = None

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[TestsetSample]:  # type: ignore[override]  # samples, not pydantic's field pairs
        return iter(self.samples)

    def __getitem__(self, index: int) -> TestsetSample:
        return self.samples[index]

    # -- conversions ---------------------------------------------------------------------
    def to_evaluation_dataset(self) -> EvaluationDataset:
        return EvaluationDataset([sample.eval_sample for sample in self.samples])

    def to_list(self) -> list[dict[str, Any]]:
        rows = []
        for sample in self.samples:
            row = sample.eval_sample.model_dump(mode="json", exclude_none=True)
            row["synthesizer_name"] = sample.synthesizer_name
            if sample.provenance is not None:
                row["provenance"] = sample.provenance.model_dump(mode="json")
            rows.append(row)
        return rows

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> Testset:
        """Rows of `to_list()` back into a Testset (the input dicts are not changed)."""
        samples = []
        for index, row in enumerate(data):
            row = dict(row)
            name = row.pop("synthesizer_name", "")
            provenance = row.pop("provenance", None)
            try:
                sample: SingleTurnSample | MultiTurnSample = (
                    SingleTurnSample(**row)
                    if isinstance(row.get("user_input"), str) or "user_input" not in row
                    else MultiTurnSample(**row)
                )
                samples.append(
                    TestsetSample(
                        eval_sample=sample,
                        synthesizer_name=name,
                        provenance=Provenance.model_validate(provenance) if provenance else None,
                    )
                )
            except ValueError as exc:
                raise DataError(str(exc), row=index, row_is_index=True) from exc
        return cls(samples=samples)

    def to_pandas(self) -> Any:
        from assay._util.deps import require

        pandas = require("pandas", extra="pandas", feature="Testset.to_pandas")
        rows = []
        for row in self.to_list():
            provenance = row.pop("provenance", None) or {}
            row["document_ids"] = provenance.get("document_ids", [])
            row["evidence"] = provenance.get("evidence", [])
            rows.append(row)
        return pandas.DataFrame(rows)

    def to_csv(self, path: str | Path) -> None:
        self.to_pandas().to_csv(path, index=False)

    # -- files --------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """JSON Lines, one sample a line; written beside and moved into place (never torn)."""
        path = Path(path)
        temporary = path.with_name(path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for row in self.to_list():
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(temporary, path)

    def to_jsonl(self, path: str | Path) -> None:
        """Ragas' name for `save`."""
        self.save(path)

    @classmethod
    def load(cls, path: str | Path) -> Testset:
        rows = []
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"not JSON: {exc.msg}", file=str(path), row=number) from exc
        return cls.from_list(rows)

    @classmethod
    def from_jsonl(cls, path: str | Path) -> Testset:
        """Ragas' name for `load`."""
        return cls.load(path)

    def save_report(self, path: str | Path) -> None:
        if self.report is None:
            raise ValueError("this Testset has no generation report")
        payload = {
            **self.report.summary(),
            "rejected": [r.model_dump() for r in self.report.rejected],
        }
        Path(path).write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")

    # -- cost ---------------------------------------------------------------------------
    def total_tokens(self) -> TokenUsage:
        if self.usage is None:
            raise ValueError(_NOT_METERED)
        return TokenUsage(
            input_tokens=self.usage.input_tokens, output_tokens=self.usage.output_tokens
        )

    def total_cost(
        self, cost_per_input_token: float | None = None, cost_per_output_token: float | None = None
    ) -> float:
        """USD spent: from the given per-token prices, else from the models' own prices."""
        if self.usage is None:
            raise ValueError(_NOT_METERED)
        if cost_per_input_token is not None or cost_per_output_token is not None:
            return self.usage.input_tokens * (cost_per_input_token or 0.0) + (
                self.usage.output_tokens * (cost_per_output_token or 0.0)
            )
        if self.usage.unpriced_requests:
            raise ValueError(
                f"{self.usage.unpriced_requests} of the generation's model calls went to a model "
                "with no known price; pass cost_per_input_token and cost_per_output_token"
            )
        return self.usage.cost


class TestsetPacket(BaseModel):
    """A test set as one shareable record (Ragas' upload packet): samples, run id and time."""

    __test__ = False

    samples_original: list[TestsetSample]
    run_id: str
    created_at: str = Field(
        default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds")
    )

    @classmethod
    def of(cls, testset: Testset) -> TestsetPacket:
        return cls(samples_original=list(testset.samples), run_id=testset.run_id)


__all__ = [
    "GenerationReport",
    "Provenance",
    "Reassignment",
    "RejectedCandidate",
    "Testset",
    "TestsetPacket",
    "TestsetSample",
]
