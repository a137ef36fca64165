"""`assay report`: one self-contained HTML page from evaluation results or experiments.

    from assay.report import write_report
    write_report(["results.jsonl"], "report.html")                 # one run
    write_report(["baseline", "improved"], "compare.html", root_dir="evals")   # a comparison
    write_report(["results.jsonl"], "report.html", sections=[alignment_report])  # + alignment

The page needs nothing but a browser: styles, the one script and the SVG charts are inline, and
its Content-Security-Policy forbids any network fetch. The page is rendered from Jinja2 templates
with autoescaping, so every datum is HTML-escaped by the engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import UsageError
from assay.report.load import load_run
from assay.report.model import Cell, Row, Run
from assay.report.page import render_page

PathLike = str | os.PathLike[str]


def build_report(
    sources: Sequence[PathLike],
    *,
    data: PathLike | None = None,
    root_dir: PathLike = ".",
    sections: Sequence[Any] = (),
) -> str:
    """The HTML of a report over `sources` (the first is the baseline of a comparison).
    `sections` are blocks shown after the metric cards, each an object with `__html__` (an
    `assay.alignment.AlignmentReport`, for one); a report may hold sections and no runs."""
    if not sources and not sections:
        raise UsageError("a report needs at least one results file, run directory or experiment")
    for section in sections:
        if not callable(getattr(section, "__html__", None)):
            raise UsageError(
                f"a report section must render itself as HTML (__html__), got {type(section).__name__}"
            )
    if data is not None and len(sources) != 1:
        raise UsageError("--data applies to a single run directory")
    runs = [load_run(source, data=data, root_dir=root_dir) for source in sources]
    seen: dict[str, int] = {}
    for (
        run
    ) in runs:  # two files named alike (a/results.jsonl, b/results.jsonl) need distinct labels
        seen[run.name] = seen.get(run.name, 0) + 1
        if seen[run.name] > 1:
            run.name = f"{run.name} ({seen[run.name]})"
    return render_page(runs, sections)


def write_report(
    sources: Sequence[PathLike],
    output: PathLike,
    *,
    data: PathLike | None = None,
    root_dir: PathLike = ".",
    sections: Sequence[Any] = (),
) -> Path:
    """Write the report over `sources` (and `sections`) to `output` and return its path."""
    html = build_report(sources, data=data, root_dir=root_dir, sections=sections)
    target = Path(output)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {target}: {exc}") from None
    return target


__all__ = ["Cell", "Row", "Run", "build_report", "load_run", "render_page", "write_report"]
