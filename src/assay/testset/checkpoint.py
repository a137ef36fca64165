"""A generation's checkpoint directory, so a rerun continues instead of paying again.

    graph.json          the knowledge graph after the transforms (+ graph.meta.json: which
                        documents and transforms made it)
    personas.json       the personas used
    run.json            what the run was asked for (size, seed, synthesizers and the hashes of
                        their prompts, writer and critic models, graph)
    candidates.jsonl    one line per finished candidate, appended and flushed the moment it
                        finishes (not when its wave is decided): "answered" (the draft, its
                        evidence and gate result) or "truncated" (the draft ran past its budget)

A rerun with the same inputs loads the graph and personas, and reads every finished candidate
back by its scenario key without calling a model; the sample loop decides them again in stream
order, so a run killed mid-wave gives the set an uninterrupted run gives. Candidates whose calls
failed were not recorded, so they are tried again. Lines of older checkpoints ("kept",
"rejected": decisions) are replayed as they are. A torn last line (a crash mid-write) is
ignored. A directory written for other inputs is refused with `CheckpointMismatch` rather than
mixed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assay.errors import CheckpointMismatch
from assay.testset.graph import KnowledgeGraph


class Checkpoint:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._candidates = self.directory / "candidates.jsonl"

    # -- graph and personas --------------------------------------------------------------
    def load_graph(self, made_from: str) -> KnowledgeGraph | None:
        meta = self.directory / "graph.meta.json"
        graph = self.directory / "graph.json"
        if not (meta.exists() and graph.exists()):
            return None
        if json.loads(meta.read_text(encoding="utf-8")).get("made_from") != made_from:
            raise CheckpointMismatch(
                f"{self.directory}: the saved knowledge graph was built from other documents or "
                "transforms; use another checkpoint directory or delete this one"
            )
        return KnowledgeGraph.load(graph)

    def save_graph(self, kg: KnowledgeGraph, made_from: str) -> None:
        kg.save(self.directory / "graph.json")
        _write_json(self.directory / "graph.meta.json", {"made_from": made_from})

    def load_personas(self) -> list[dict[str, Any]] | None:
        path = self.directory / "personas.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def save_personas(self, personas: list[dict[str, Any]]) -> None:
        _write_json(self.directory / "personas.json", personas)

    # -- the run -------------------------------------------------------------------------
    def open_run(self, fingerprint: dict[str, Any]) -> None:
        path = self.directory / "run.json"
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved != fingerprint:
                changed = sorted(
                    k for k in set(saved) | set(fingerprint) if saved.get(k) != fingerprint.get(k)
                )
                raise CheckpointMismatch(
                    f"{self.directory}: this checkpoint belongs to a generation with other "
                    f"settings ({', '.join(changed)} differ); use another directory or delete it"
                )
            return
        _write_json(path, fingerprint)

    def decisions(self) -> dict[str, dict[str, Any]]:
        """Finished candidates by key; the last line per key wins, a torn last line is ignored."""
        if not self._candidates.exists():
            return {}
        content = self._candidates.read_bytes()
        if content and not content.endswith(b"\n"):
            # torn by a crash mid-write: cut it so the candidate is decided again
            content = content[: content.rfind(b"\n") + 1]
            with self._candidates.open("rb+") as handle:
                handle.truncate(len(content))
        found: dict[str, dict[str, Any]] = {}
        for number, raw in enumerate(content.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise CheckpointMismatch(
                    f"{self._candidates}: line {number} is not JSON; the file was edited or damaged"
                ) from None
            found[record["candidate"]] = record
        return found

    def record(self, decision: dict[str, Any]) -> None:
        with self._candidates.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(decision, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _write_json(path: Path, data: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, path)


__all__ = ["Checkpoint"]
