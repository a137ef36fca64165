"""`batches.jsonl` in the run directory: every batch submitted, what it carries, how it ended.

A line is written (and flushed to disk) as soon as the provider has given a batch its id, before
the run waits for it:

    {"event": "submitted", "batch": id, "endpoint": ..., "requests": {custom_id: request key},
     "cells": [[row, metric], ...], "at": ...}
    {"event": "ended", "batch": id, "status": ..., "failed": [custom_id, ...]}

Where the API uploads the requests before it makes the batch (OpenAI's input file), the upload
is written first (`{"event": "uploaded", "upload": file id, "endpoint", "requests"}`) and named by
the batch's line (`"upload"`): a run killed between the provider making the batch and this line
being written leaves an upload no batch names, and `pending_upload` lets the resumed run ask the
provider which batch was made of it (`BatchClient.find`) before submitting anything.

A run killed while batches are in flight is run again with the same directory: its cells ask the
same requests (the same request keys), and `carrier` finds the batch that already carries each
one, so the run polls that batch instead of paying for a second. A batch that ended keeps its
answers at the provider, so the same lookup also spares a resumed run whose cells were not yet
saved. A line that failed in a batch is not looked up there again. Without a run directory the
journal lives in memory only (within one run, a request is never sent twice anyway).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any


@dataclass
class Recorded:
    """One batch as the journal knows it."""

    batch: str
    endpoint: str
    requests: dict[str, str]  # custom id -> request key
    cells: list[list[Any]] = field(default_factory=list)
    status: str | None = None  # set once it ended
    failed: set[str] = field(default_factory=set)  # custom ids that failed in it
    gone: bool = False  # the provider no longer has it (its answers cannot be read)


class BatchJournal:
    """The record of a run's batches; `path=None` keeps it in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.batches: dict[str, Recorded] = {}
        # (endpoint, request key) -> [(batch id, custom id)], oldest first
        self._carriers: dict[tuple[str, str], list[tuple[str, str]]] = {}
        # uploads no batch line names yet: upload id -> its requests (custom id -> key)
        self.uploads: dict[str, dict[str, str]] = {}
        self._uploaded: dict[tuple[str, str], list[str]] = {}  # (endpoint, key) -> upload ids
        self._handle: IO[str] | None = None
        if path is not None and path.exists():
            self._read(path)

    def _read(self, path: Path) -> None:
        for line in path.read_bytes().decode("utf-8", "replace").splitlines():
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of a killed run: that batch is submitted again
            if not isinstance(item, dict):
                continue
            self._apply(item)

    def _apply(self, item: dict[str, Any]) -> None:
        batch = str(item.get("batch") or "")
        event = item.get("event")
        if event == "submitted" and isinstance(item.get("requests"), dict):
            recorded = self.batches[batch] = Recorded(
                batch=batch,
                endpoint=str(item.get("endpoint") or ""),
                requests={str(k): str(v) for k, v in item["requests"].items()},
                cells=list(item.get("cells") or []),
            )
            for custom_id, key in recorded.requests.items():
                self._carriers.setdefault((recorded.endpoint, key), []).append((batch, custom_id))
            self.uploads.pop(str(item.get("upload")), None)
        elif event == "uploaded" and isinstance(item.get("requests"), dict):
            upload = str(item.get("upload") or "")
            requests = {str(k): str(v) for k, v in item["requests"].items()}
            self.uploads[upload] = requests
            for key in requests.values():
                self._uploaded.setdefault((str(item.get("endpoint") or ""), key), []).append(upload)
        elif event == "abandoned":
            self.uploads.pop(str(item.get("upload")), None)
        elif batch in self.batches and event == "ended":
            recorded = self.batches[batch]
            recorded.status = str(item.get("status") or "")
            recorded.failed.update(str(c) for c in item.get("failed") or ())
        elif batch in self.batches and event == "gone":
            self.batches[batch].gone = True

    def carrier(self, endpoint: str, key: str) -> tuple[str, str] | None:
        """(batch id, custom id) of a recorded batch of this endpoint that carries the request
        `key` and has not failed it; the newest such batch."""
        for batch, custom_id in reversed(self._carriers.get((endpoint, key), ())):
            recorded = self.batches[batch]
            if not recorded.gone and custom_id not in recorded.failed:
                return batch, custom_id
        return None

    def pending_upload(self, endpoint: str, key: str) -> str | None:
        """The newest upload carrying request `key` that no batch line names (see the module)."""
        for upload in reversed(self._uploaded.get((endpoint, key), ())):
            if upload in self.uploads:
                return upload
        return None

    def uploaded(self, upload: str, endpoint: str, requests: dict[str, str]) -> None:
        self._write(
            {"event": "uploaded", "upload": upload, "endpoint": endpoint, "requests": requests}
        )

    def abandoned(self, upload: str) -> None:
        """No batch was made of the upload: its requests are submitted afresh."""
        self._write({"event": "abandoned", "upload": upload})

    def submitted(
        self,
        batch: str,
        endpoint: str,
        requests: dict[str, str],
        cells: list[list[Any]],
        upload: str | None = None,
    ) -> None:
        self._write(
            {
                "event": "submitted",
                "batch": batch,
                "endpoint": endpoint,
                "requests": requests,
                "cells": cells,
                "upload": upload,
                "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
        )

    def ended(self, batch: str, status: str, failed: list[str]) -> None:
        self._write({"event": "ended", "batch": batch, "status": status, "failed": failed})

    def gone(self, batch: str) -> None:
        self._write({"event": "gone", "batch": batch})

    def _write(self, item: dict[str, Any]) -> None:
        self._apply(item)
        if self.path is None:
            return
        if self._handle is None:
            torn = self.path.exists() and not self.path.read_bytes().endswith(b"\n")
            self._handle = self.path.open("a", encoding="utf-8")
            if torn and self.path.stat().st_size:
                self._handle.write("\n")  # end a killed run's torn line before appending
        self._handle.write(json.dumps(item, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())  # the batch is paid for: its id must survive a crash

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


__all__ = ["BatchJournal", "Recorded"]
