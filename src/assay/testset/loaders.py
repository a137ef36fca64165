"""Reading documents: a folder of plain-text, Markdown and reStructuredText files (no LangChain
needed), and any documents given (strings, `(text, metadata)` pairs, LangChain's
`page_content`, LlamaIndex's `text`) into graph nodes.

Files are read as UTF-8 (a file that is not UTF-8 is a `DataError` naming it) in sorted path
order, so the same folder always gives the same documents. Each document's metadata holds its
path relative to the folder (`source`) and its file name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import DataError, UsageError
from assay.testset.graph import Node, NodeType, stable_id
from assay.testset.text import normalize_space

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


def _text_and_metadata(item: Any, index: int) -> tuple[str, dict[str, Any]]:
    if isinstance(item, str):
        return item, {}
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return item[0], dict(item[1] or {})
    for attribute in ("page_content", "text"):
        value = getattr(item, attribute, None)
        if isinstance(value, str):
            return value, dict(getattr(item, "metadata", None) or {})
    getter = getattr(item, "get_content", None)
    if callable(getter):
        return str(getter()), dict(getattr(item, "metadata", None) or {})
    raise UsageError(
        f"documents[{index}] is a {type(item).__name__}: pass strings, (text, metadata) pairs, "
        "or documents with page_content (LangChain) or text (LlamaIndex)"
    )


def documents_to_nodes(items: Sequence[Any], node_type: NodeType, notes: list[str]) -> list[Node]:
    """Graph nodes for the items with text, ids from their content; blank items skipped and
    exact duplicates (same text up to whitespace and case) dropped, both noted in `notes`."""
    what = "chunks" if node_type == NodeType.CHUNK else "documents"
    nodes, seen, blank, twins = [], set(), 0, 0
    for index, item in enumerate(items):
        text, metadata = _text_and_metadata(item, index)
        if not text.strip():
            blank += 1
            continue
        key = normalize_space(text).lower()
        if key in seen:
            twins += 1
            continue
        seen.add(key)
        nodes.append(
            Node(
                id=stable_id(node_type.value, text),
                type=node_type,
                properties={"page_content": text, "document_metadata": metadata},
            )
        )
    if not nodes:
        raise UsageError(
            f"no {what} with text: got {len(items)} {what}"
            + (f", {blank} of them empty or whitespace only" if blank else "")
            + "; pass at least one non-empty document"
        )
    if blank:
        notes.append(f"{blank} empty {what} skipped")
    if twins:
        notes.append(f"{twins} duplicate {what} dropped (same text as an earlier one)")
    return nodes


__all__ = ["DEFAULT_SUFFIXES", "documents_to_nodes", "load_documents"]
