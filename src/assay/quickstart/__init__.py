"""`assay quickstart TEMPLATE [DIR]`: a small project to copy, run and change.

Each template (under `templates/`, shipped as package data) holds an app, a dataset under
`evals/datasets/`, `evals.py` running the app over it as an `@experiment` with assay metrics
(judge_alignment aligns a judge instead; improve_rag and benchmark_llm run twice and compare the
runs with paired intervals), and a README; the newer ones a pyproject.toml too. `python evals.py`
uses the embedded offline model unless `ASSAY_LLM` names another.
"""

from __future__ import annotations

import os
import sys
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import UsageError

if TYPE_CHECKING:  # importlib.resources.abc is new in 3.11
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

TEMPLATES = {
    "rag_eval": "a small RAG app (keyword retrieval + LLM answer), judged for correctness and faithfulness",
    "prompt_evals": "a prompt that labels movie reviews, two prompt versions, scored for accuracy",
    "agent_evals": "a calculator agent that calls tools, scored on its answer and its tool calls",
    "workflow_eval": "an email-triage workflow (classify, extract, reply), judged against pass criteria",
    "judge_alignment": "a pass/fail judge aligned to human labels, agreement before and after with intervals",
    "llamaIndex_agent_evals": "a LlamaIndex FunctionAgent keeping a list, scored on tool calls and goal",
    "text2sql": "an LLM writing SQL for a shipped SQLite shop, scored on execution results and equivalence",
    "improve_rag": "one RAG app, two retrieval settings, the difference as a paired interval",
    "benchmark_llm": "two models on one task (discount rules), compared row by row with a paired interval",
    "agent_simulation": "ten simulated customers talk to a tool-using support agent; the conversations scored for goal accuracy",
}

_SKIP = {"__pycache__", ".DS_Store"}


def template_root(name: str) -> Traversable:
    if name not in TEMPLATES:
        raise UsageError(f"no quickstart template {name!r}; choose one of {', '.join(TEMPLATES)}")
    return files("assay.quickstart") / "templates" / name


def create_project(template: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """Copy `template` into `directory` (default: ./TEMPLATE), which must be empty or absent."""
    source = template_root(template)
    target = Path(directory) if directory is not None else Path(template)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} already exists and is not empty; choose a new directory")
    files_written = _copy(source, target)
    if not files_written:
        raise UsageError(f"template {template!r} is missing from this installation of assay")
    return target


def _copy(source: Traversable, target: Path) -> int:
    count = 0
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir(), key=lambda item: item.name):
        if entry.name in _SKIP or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            count += _copy(entry, target / entry.name)
        else:
            (target / entry.name).write_bytes(entry.read_bytes())
            count += 1
    return count


__all__ = ["TEMPLATES", "create_project", "template_root"]
