"""Write a run's record as JSON and markdown, and merge every record into one table.

Each run gives `<suite>__<aspect>__<metric>__<split>__<judge>__p<params hash>[__limitN]`
`[__aligned<hash>][__w<prompt variants' hash>][__t<threshold>].json` and `.md` in the output directory (a rerun of the same configuration replaces its files); `merge_results`
writes `README.md` there with one row per run.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from assay.errors import UsageError

# Published agreement of Ragas (gpt-3.5) with people on WikiEval (Es et al. 2023, Table 1).
WIKIEVAL_REFERENCE = {"faithfulness": 0.95, "answer_relevance": 0.78, "context_relevance": 0.70}


def judge_name(record: dict[str, Any]) -> str:
    judge = record.get("judge")
    if not judge:
        return "none"
    if isinstance(judge, dict):
        return "/".join(str(judge[key]) for key in ("provider", "model") if judge.get(key))
    return str(judge)


def engine_label(record: dict[str, Any]) -> str:
    """Who scored the rows: `assay`, or e.g. `Ragas 0.4.3` for a side-by-side run."""
    engine = record.get("engine") or {"name": "assay"}  # records from before side-by-side runs
    if engine.get("name") == "ragas":
        return f"Ragas {engine.get('version', '?')}"
    return str(engine.get("name", "assay"))


def _is_assay(record: dict[str, Any]) -> bool:
    return (record.get("engine") or {}).get("name", "assay") == "assay"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def result_stem(record: dict[str, Any]) -> str:
    """Readable parts plus a short hash of the metric's parameters, so that two settings of one
    metric (e.g. strict_order true and false) keep separate files."""
    params = json.dumps(record["metric"].get("params") or {}, sort_keys=True, default=str)
    tag = "p" + hashlib.sha256(params.encode("utf-8")).hexdigest()[:6]
    name = (
        record["metric"]["name"]
        if _is_assay(record)
        else f"{engine_label(record)}-{record['metric']['name']}"
    )
    parts = [record["suite"], record["aspect"], name, record["split"], judge_name(record), tag]
    stem = "__".join(_slug(part) for part in parts)
    stem += f"__limit{record['limit']}" if record.get("limit") else ""
    alignment = record["metric"].get("alignment")
    stem += f"__aligned{alignment['hash']}" if alignment else ""  # never over the unaligned run
    if record.get("prompts_dir"):  # never over the shipped wording's run
        wording = json.dumps(record.get("prompts") or [], sort_keys=True)
        stem += "__w" + hashlib.sha256(wording.encode("utf-8")).hexdigest()[:6]
    threshold = record.get("threshold")
    return stem + (f"__t{threshold:.4g}" if threshold is not None and threshold != 0.5 else "")


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) >= 2
    ):
        return str(int(value))
    return f"{value:.{digits}f}"


def figure_text(figure: dict[str, Any]) -> str:
    text = _number(figure["value"])
    if figure.get("low") is not None and figure.get("high") is not None:
        text += f" [{_number(figure['low'])}, {_number(figure['high'])}]"
    return text


def _prompts(record: dict[str, Any]) -> str:
    if not _is_assay(record):
        return f"{engine_label(record)}'s own"
    return (
        ", ".join(f"{p['id']} v{p['version']} ({p['hash']})" for p in record.get("prompts") or [])
        or "none"
    )


def _prompt_cell(record: dict[str, Any]) -> str:
    """The merged table's prompts column: each prompt's id and the start of its content hash,
    and the folder when the wording was one under trial (`--prompts-dir`), so two runs of one
    metric that asked differently never read as the same setting."""
    if not _is_assay(record):
        return _prompts(record)
    cell = "<br>".join(f"{p['id']} {p['hash'][:6]}" for p in record.get("prompts") or []) or "none"
    if record.get("prompts_dir"):
        cell += f"<br>(from {record['prompts_dir']})"
    return cell


def _params(record: dict[str, Any]) -> str:
    params = record["metric"].get("params") or {}
    return ", ".join(f"{key}={json.dumps(value)}" for key, value in params.items()) or "none"


def _seconds(cost: dict[str, Any]) -> str:
    """Seconds per item, marked when answers came from the response cache (then the time says
    nothing about the judge's speed)."""
    text = _number(cost["seconds_per_item"], 2)
    cached, fresh = cost.get("cached_calls_per_item") or 0.0, cost.get("calls_per_item") or 0.0
    if cached and not fresh:
        return f"{text} (all cached)"
    return f"{text} (partly cached)" if cached else text


def _latency(cost: dict[str, Any]) -> str:
    latency = cost.get("cell_latency_seconds")
    if latency is None:
        return ""
    return f" (a cell took {_number(latency, 2)} s, {cost.get('max_concurrency')} at once)"


def _short_params(record: dict[str, Any]) -> str:
    """The metric's name with the parameters that tell runs apart.

    English is the default language, and a parameter left at None is an option not taken, so
    neither is shown: adding an option to a metric must not rename every earlier run.
    """
    params = {
        k: v
        for k, v in (record["metric"].get("params") or {}).items()
        if (k, v) != ("language", "english") and v is not None
    }
    inner = ", ".join(f"{key}={value}" for key, value in params.items())
    return f"{record['metric']['name']}({inner})" if inner else record["metric"]["name"]


def _engine_text(record: dict[str, Any]) -> str:
    if _is_assay(record):
        return "assay"
    engine = record["engine"]
    return (
        f"{engine_label(record)} in its own virtualenv ({engine.get('python')}, openai {engine.get('openai')}), "
        "against the same judge and items as assay"
    )


def run_markdown(record: dict[str, Any]) -> str:
    cells, cost = record["cells"], record["cost"]
    lines = [
        f"# {record['suite']} / {record['aspect']}: {engine_label(record)} {record['metric']['name']} "
        f"({record['split']} split)",
        "",
        "| | |",
        "|---|---|",
        f"| scored by | {_engine_text(record)} |",
        f"| metric | {record['metric']['class']} v{record['metric']['version']}; params: {_params(record)} |",
        f"| judge | {judge_name(record)} |",
        f"| prompts | {_prompts(record)} |",
        f"| data | {', '.join(record['data']['files'])} ({'; '.join(record['data']['notes'])}) |",
        f"| units scored | {record['n_scored']} of {record['n_units']} (coverage {record['coverage']:.1%}) |",
        *(
            [
                f"| threshold | {record['threshold']:.4g}, tuned on dev: {record['threshold_source']} |"
            ]
            if record.get("threshold_source")
            else []
        ),
        f"| cells | {cells['rows']} rows: {cells['ok']} ok, {cells['skipped']} skipped, {cells['error']} error |",
        f"| per item | {_seconds(cost)} s of wall time{_latency(cost)}, "
        f"{_number(cost['calls_per_item'], 2)} calls, "
        f"{_number(cost['input_tokens_per_item'], 0)} input + {_number(cost['output_tokens_per_item'], 0)} "
        "output tokens |",
        f"| assay | {record['assay_version']}, {record['date']} |",
        "",
        "| figure | value [95% CI] | n | method |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {f['label']} | {figure_text(f)} | {f['n']} | {f['method']} |" for f in record["figures"]
    ]
    reference = WIKIEVAL_REFERENCE.get(record["aspect"]) if record["suite"] == "wikieval" else None
    if reference is not None:
        lines += ["", f"Ragas paper (gpt-3.5) on the same pairs: {reference:.2f}."]
    problems = [
        f"{kind}: {count}"
        for kind, count in {**cells["error_types"], **cells["skip_reasons"]}.items()
    ]
    if problems:
        lines += ["", "Not scored: " + "; ".join(problems) + "."]
    return "\n".join(lines) + "\n"


def tuned_threshold(
    path: str | Path, *, suite: str, split: str, spec: dict[str, Any] | None = None
) -> float:
    """The best-balanced-accuracy threshold recorded by a dev-split run of the same suite. With
    the scoring metric's `spec`, also refuse a threshold tuned with another metric or with other
    parameters or prompt wording (a changed default included): a threshold belongs to the settings
    it was tuned on."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--threshold-from {path}: not a readable benchmark result ({exc})"
        ) from None
    if record.get("suite") != suite:
        raise UsageError(
            f"--threshold-from {path}: a {record.get('suite')!r} result, not {suite!r}"
        )
    if record.get("split") != "dev":
        raise UsageError(
            f"--threshold-from {path}: thresholds may only be tuned on dev data; "
            f"this result is from the {record.get('split')!r} split"
        )
    if split == "dev":
        raise UsageError(
            "--threshold-from applies a dev threshold to the test split; use --split test"
        )
    if spec is not None:
        tuned = record.get("metric") or {}
        normal = lambda params: json.dumps(params or {}, sort_keys=True, default=str)  # noqa: E731
        if (tuned.get("name"), normal(tuned.get("params"))) != (
            spec.get("name"),
            normal(spec.get("params")),
        ):
            raise UsageError(
                f"--threshold-from {path}: tuned for {tuned.get('name')} with "
                f"{normal(tuned.get('params'))}, but this run scores {spec.get('name')} with "
                f"{normal(spec.get('params'))}; run the dev split with the same metric first"
            )
        wording = lambda prompts: {p.get("id"): p.get("hash") for p in prompts or []}  # noqa: E731
        if wording(record.get("prompts")) != wording(spec.get("prompts")):
            raise UsageError(
                f"--threshold-from {path}: tuned with the prompts {wording(record.get('prompts'))}, "
                f"but this run sends {wording(spec.get('prompts'))} (another wording, e.g. "
                "--prompts-dir); run the dev split with the same prompts first"
            )
    for figure in record.get("figures", []):
        if figure.get("name") == "best_threshold" and figure.get("value") is not None:
            return float(figure["value"])
    raise UsageError(
        f"--threshold-from {path}: the result has no tuned threshold (both labels needed)"
    )


def write_record(record: dict[str, Any], output_dir: str | Path) -> tuple[Path, Path]:
    """Write `<stem>.json` and `<stem>.md`; return both paths."""
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stem = result_stem(record)
    json_path, md_path = folder / f"{stem}.json", folder / f"{stem}.md"
    json_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(run_markdown(record), encoding="utf-8")
    return json_path, md_path


def read_records(output_dir: str | Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted(Path(output_dir).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path} is not a benchmark record: {exc}") from None
        if isinstance(record, dict) and "figures" in record and "suite" in record:
            records.append(record)
    return records


def merged_markdown(records: list[dict[str, Any]]) -> str:
    lines = [
        "# assay benchmark results",
        "",
        "Agreement of assay's metrics with human labels; written by `assay benchmark report` from the "
        "JSON records in this folder (one per run). 95% intervals in brackets; n = units scored / units "
        "taken (pairs, items, instances or cases). Prompts: each prompt the metric sent, with the start "
        "of its content hash (the run's markdown file has the whole hash). Cost is per row: wall time "
        "of the run over its rows.",
        "",
        "| suite | split | aspect | scored by | metric | judge | prompts | n | figures | s/item | calls/item | tokens/item | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    # Side-by-side runs sit next to assay's for the same suite and aspect.
    order = sorted(
        records,
        key=lambda r: (
            r["suite"],
            r["aspect"],
            r["split"],
            not _is_assay(r),
            r["metric"]["name"],
            judge_name(r),
            r.get("limit") or 0,
        ),
    )
    for record in order:
        figures = "<br>".join(
            f"{f['label']}: {figure_text(f)}" for f in record["figures"] if f.get("headline")
        )
        cost = record["cost"]
        tokens = cost["input_tokens_per_item"] + cost["output_tokens_per_item"]
        lines.append(
            f"| {record['suite']} | {record['split']} | {record['aspect']} | {engine_label(record)} | "
            f"{_short_params(record)} | "
            f"{judge_name(record)} | {_prompt_cell(record)} | "
            f"{record['n_scored']}/{record['n_units']} | {figures} | "
            f"{_seconds(cost)} | {_number(cost['calls_per_item'], 2)} | "
            f"{_number(tokens, 0)} | {record['date'][:10]} |"
        )
    lines += side_by_side_markdown(records)
    lines += [
        "",
        "Reference: the Ragas paper reports agreement of 0.95 (faithfulness), 0.78 (answer relevance) "
        "and 0.70 (context relevance) on WikiEval with gpt-3.5.",
    ]
    return "\n".join(lines) + "\n"


def _same_items(record: dict[str, Any]) -> tuple[Any, ...]:
    """Runs with equal keys scored the same rows (the loaders are deterministic in these)."""
    return (
        record["suite"],
        record["aspect"],
        record["split"],
        record.get("limit"),
        record.get("seed"),
        judge_name(record),
    )


def _in_order(record: dict[str, Any]) -> tuple[tuple[bool, Any], ...]:
    """A sort key over `_same_items` in which an unset field (a run without a limit) sorts last."""
    return tuple((value is None, 0 if value is None else value) for value in _same_items(record))


def _headline(record: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in record["figures"] if f.get("headline")), None)


def side_by_side_markdown(records: list[dict[str, Any]]) -> list[str]:
    """Lines of a table pairing each Ragas run with assay's runs on the same items and judge (none
    when there is no such pair)."""
    ours: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for record in records:
        if _is_assay(record):
            ours.setdefault(_same_items(record), []).append(record)
    rows = []
    for theirs in sorted((r for r in records if not _is_assay(r)), key=_in_order):
        their_figure = _headline(theirs)
        for mine in sorted(ours.get(_same_items(theirs), []), key=_short_params):
            my_figure = _headline(mine)
            if (
                their_figure is None
                or my_figure is None
                or my_figure["name"] != their_figure["name"]
            ):
                continue
            rows.append(
                f"| {theirs['suite']} | {theirs['split']} | {theirs['aspect']} | {theirs['n_units']} | "
                f"{judge_name(theirs)} | {my_figure['label']} | {_short_params(mine)} | "
                f"{figure_text(my_figure)} ({mine['n_scored']} scored) | {_seconds(mine['cost'])} | "
                f"{engine_label(theirs)} {theirs['metric']['class'].rsplit('.', 1)[-1]} | "
                f"{figure_text(their_figure)} ({theirs['n_scored']} scored) | "
                f"{_seconds(theirs['cost'])} |"
            )
    if not rows:
        return []
    return [
        "",
        "## Side by side with Ragas (same items, same judge)",
        "",
        "| suite | split | aspect | units | judge | figure | assay metric | assay | s/item | Ragas metric | Ragas | s/item |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]


# Hand-written notes in the results folder (e.g. what could not be measured), appended to README.md.
NOTES_FILE = "notes.md"


def merge_results(output_dir: str | Path) -> tuple[Path, int]:
    """Write `README.md` in `output_dir` from every record there; return its path and the count."""
    folder = Path(output_dir)
    if not folder.is_dir():
        raise UsageError(
            f"no results directory {folder}; run `assay benchmark SUITE --metric M` first"
        )
    records = read_records(folder)
    text = merged_markdown(records)
    notes = folder / NOTES_FILE
    if notes.is_file():  # what was not measured, and why: kept beside the table of record
        text = (
            text.rstrip("\n")
            + "\n\n## Notes\n\n"
            + notes.read_text(encoding="utf-8").strip()
            + "\n"
        )
    path = folder / "README.md"
    path.write_text(text, encoding="utf-8")
    return path, len(records)


__all__ = [
    "NOTES_FILE",
    "WIKIEVAL_REFERENCE",
    "engine_label",
    "merge_results",
    "read_records",
    "result_stem",
    "run_markdown",
    "side_by_side_markdown",
    "write_record",
]
