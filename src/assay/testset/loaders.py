"""Reading a folder of plain-text, Markdown and reStructuredText files, with no LangChain.

Files are read as UTF-8 (a file that is not UTF-8 is a `DataError` naming it) in sorted path
order, so the same folder always gives the same documents. Each document's metadata holds its
path relative to the folder (`source`) and its file name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.errors import DataError, UsageError

DEFAULT_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".text")


def load_documents(
    path: str | Path, *, suffixes: Sequence[str] = DEFAULT_SUFFIXES, recursive: bool = True
) -> list[tuple[str, dict[str, str]]]:
    """`(text, metadata)` for each matching file under `path` (or `path` itself if a file).
    A `.rst.txt` file (Sphinx sources) counts as text."""
    root = Path(path)
    if not root.exists():
        raise UsageError(f"{root}: no such file or folder")
    if root.is_file():
        files = [root]
        base = root.parent
    else:
        pattern = "**/*" if recursive else "*"
        wanted = tuple(s.lower() for s in suffixes)
        files = sorted(
            p for p in root.glob(pattern) if p.is_file() and p.name.lower().endswith(wanted)
        )
        base = root
    if not files:
        raise UsageError(f"{root}: no {', '.join(suffixes)} files found")
    documents = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text (byte {exc.start})", file=str(file)) from exc
        documents.append((text, {"source": str(file.relative_to(base)), "filename": file.name}))
    return documents


__all__ = ["DEFAULT_SUFFIXES", "load_documents"]
