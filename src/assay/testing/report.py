"""The merged report of a pytest run: one JSON file (`--assay-report`, readable back as a
`--assay-baseline`) and one Markdown summary (`--assay-summary`, `$GITHUB_STEP_SUMMARY`).

Each test's record is made where the test ran (a worker, under `pytest -n`) and travels to the
controller inside the test's report, so merging is collecting; nothing is written by workers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.schema.dataset import atomic_open

REPORT_FORMAT = "assay-pytest-report"
REPORT_VERSION = 1


def totals(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    outcomes = [record.get("outcome") for record in records.values()]
    return {
        "tests": len(records),
        "passed": outcomes.count("passed"),
        "failed": outcomes.count("failed"),
        "skipped": outcomes.count("skipped"),
        "judge_calls": sum(record.get("calls", 0) for record in records.values()),
        "cache_hits": sum(record.get("cache_hits", 0) for record in records.values()),
        "cost_usd": math.fsum(record.get("cost", 0.0) for record in records.values()),
        "cache_misses": sum(record.get("misses", 0) for record in records.values()),
    }


def report_document(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    ordered = dict(sorted(records.items()))
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "totals": totals(ordered),
        "tests": ordered,
    }


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Written beside `path` and renamed into place: complete or absent, never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.write(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _number(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(records: Mapping[str, Mapping[str, Any]]) -> str:
    total = totals(records)
    lines = [
        "## assay gates",
        "",
        f"{total['tests']} test(s): {total['passed']} passed, {total['failed']} failed, "
        f"{total['skipped']} skipped · judge calls {total['judge_calls']} · cache hits "
        f"{total['cache_hits']} · cost ${total['cost_usd']:.4f}",
        "",
        "| Test | Metric | Threshold | Mean | Interval | Rows | Judgements | Decision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for nodeid, record in sorted(records.items()):
        checks = record.get("checks") or []
        if not checks:
            lines.append(f"| `{_cell(nodeid)}` | | | | | | | {record.get('outcome', '')} |")
        for check in checks:
            if check.get("kind") == "case":
                values = ", ".join(_number(v, 2) for v in check.get("values", []))
                lines.append(
                    f"| `{_cell(nodeid)}` | {_cell(check['metric'])} | {check['threshold']} | "
                    f"{values} | case, rule {check['rule']} | 1 | {check['repeats']} | "
                    f"{check['decision']} |"
                )
                continue
            interval = (
                f"[{_number(check['low'])}, {_number(check['high'])}] {check['method']}"
                if check.get("low") is not None
                else "none"
            )
            decision = check["decision"]
            if check["verdict"] != check["decision"]:
                decision += f" ({check['verdict']}, {check['mode']})"
            base = check.get("baseline")
            if base and base.get("mean_difference") is not None:
                decision += f"; vs baseline {base['mean_difference']:+.3f} ({base['direction']})"
            applicable = check["n_rows"] - check["n_skipped"]
            lines.append(
                f"| `{_cell(nodeid)}` | {_cell(check['metric'])} | {check['threshold']} | "
                f"{_number(check['mean'])} | {interval} | {check['n_scored']}/{applicable} | "
                f"{check['repeats']} | {_cell(decision)} |"
            )
    return "\n".join(lines) + "\n"


def append_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


__all__ = [
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "append_text",
    "markdown",
    "report_document",
    "totals",
]
