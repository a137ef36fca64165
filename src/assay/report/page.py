"""The HTML page: header with usage, one card per metric, the comparison, the row drill-down.

One self-contained document: inline CSS, one inline script (allowed by its hash in the page's
Content-Security-Policy, which also forbids every network fetch), inline SVG charts.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime, timezone
from typing import Any

from assay._version import __version__
from assay.report.assets import SCRIPT, STYLE
from assay.report.compare import CONFIDENCE, Difference, difference, pair_rows
from assay.report.model import Row, Run
from assay.report.rows import esc, render_row
from assay.report.stats import MetricStats, Problem, format_number, metric_stats
from assay.report.svg import colour, histogram_svg, labels_svg


def render_page(runs: list[Run]) -> str:
    metrics = list(dict.fromkeys(name for run in runs for name in run.metrics))
    names = [run.name for run in runs]
    title = f"assay report: {' vs '.join(names)}"
    stats = {metric: [metric_stats(run, metric) if metric in run.metrics else None for run in runs] for metric in metrics}
    matched_by, aligned = align(runs)
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{script_hash}'"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{esc(title)}</h1><p class=\"muted\">made {esc(_now())} by assay {esc(__version__)}</p></header>",
        '<section class="runs">', *(_run_box(run, i, len(runs) > 1) for i, run in enumerate(runs)), "</section>",
        "<h2>Metrics</h2>",
    ]
    if not metrics:
        parts.append('<p class="muted">no metric columns found in these results</p>')
    if len(runs) > 1:
        parts.append(f'<p class="muted">Rows matched by {esc(matched_by)}; differences are paired over rows '
                     f"scored in both runs, with a {CONFIDENCE:.0%} bootstrap interval of the mean difference.</p>")
    parts.append('<section class="cards">')
    for metric in metrics:
        diffs = [difference(runs[0], run, metric, pair_rows(runs[0], run)[1])
                 for run in runs[1:] if metric in run.metrics and metric in runs[0].metrics]
        parts.append(_card(metric, names, stats[metric], diffs))
    parts.append("</section>")
    parts.append(_rows_section(aligned, names, metrics))
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def align(runs: list[Run]) -> tuple[str, list[tuple[str, list[Row | None]]]]:
    """Rows of every run lined up with the first run's (by id or by position)."""
    if len(runs) == 1:
        return "position", [(row.key, [row]) for row in runs[0].rows]
    table: dict[str, list[Row | None]] = {row.key: [row] + [None] * (len(runs) - 1) for row in runs[0].rows}
    extra: dict[str, list[Row | None]] = {}
    matched_by = "id"
    for position, run in enumerate(runs[1:], start=1):
        how, pairs = pair_rows(runs[0], run)
        matched_by = how if how == "position" else matched_by
        for key, mine, theirs in pairs:
            target = table if mine is not None else extra
            slot = target.setdefault(key, [None] * len(runs))
            slot[position] = theirs
    return matched_by, [*table.items(), *extra.items()]


def _usage_text(usage: dict[str, Any] | None) -> str:
    if not usage or (not usage.get("requests") and not usage.get("cached_requests")):
        return "no model calls recorded" if usage is not None else "unknown"
    text = (f"{usage.get('input_tokens', 0):,} input + {usage.get('output_tokens', 0):,} output tokens, "
            f"{usage.get('requests', 0):,} request(s)")
    if usage.get("cached_requests"):
        text += f" (+{usage['cached_requests']:,} from cache)"
    cost = usage.get("cost") or 0.0
    text += f"; cost ${cost:.4f}" if cost or not usage.get("unpriced_requests") else ""
    if usage.get("unpriced_requests"):
        text += f"; {usage['unpriced_requests']:,} request(s) to a model without a known price (not in the cost)"
    return text


def _run_box(run: Run, index: int, several: bool) -> str:
    swatch = f'<span class="swatch" style="background:{colour(index)}"></span>' if several else ""
    role = " · baseline" if several and index == 0 else ""
    facts = [("kind", run.kind), ("source", run.path), *run.info.items()]
    if run.usage is not None or run.kind == "run directory":
        facts.append(("tokens and cost", _usage_text(run.usage)))
    rows = "".join(f"<dt>{esc(key)}</dt><dd>{esc(value)}</dd>" for key, value in facts)
    return f'<div class="run-box"><h3>{swatch}{esc(run.name)}{esc(role)}</h3><dl class="facts">{rows}</dl></div>'


def _mean_text(item: MetricStats) -> str:
    if item.mean is None:
        if item.labels:
            return ", ".join(f"{label}: {count}" for label, count in item.labels.most_common(4))
        return "n/a"
    return ("pass rate " if item.from_labels else "") + f"{item.mean:.3f}"


def _problems(title: str, problems: list[Problem], css: str) -> str:
    if not problems:
        return ""
    items = "".join(f'<li><span class="{css}">{esc(problem.message)}</span> <span class="muted">'
                    f"({len(problem.rows)} row(s): {esc(', '.join(problem.rows[:12]))}"
                    f"{' …' if len(problem.rows) > 12 else ''})</span></li>" for problem in problems)
    return f'<details class="problems" open><summary>{esc(title)}</summary><ul>{items}</ul></details>'


def _card(metric: str, names: list[str], stats: list[MetricStats | None], diffs: list[Difference]) -> str:
    present = [(names[i], item, i) for i, item in enumerate(stats) if item is not None]
    lines = []
    for name, item, index in present:
        swatch = f'<span class="swatch" style="background:{colour(index)}"></span>{esc(name)}: ' if len(names) > 1 else ""
        counts = f"{item.n_skipped} skipped, {item.n_error} error(s)" + (f", {item.n_missing} not run" if item.n_missing else "")
        lines.append(f'<div class="mean">{swatch}<span class="big">{esc(_mean_text(item))}</span> '
                     f'<span class="coverage">coverage {esc(item.coverage_text)} rows ({item.coverage:.0%})</span>'
                     f'<div class="muted">{esc(counts)}</div></div>')
        if item.usage and item.usage.get("requests"):
            lines.append(f'<div class="muted small">{esc(_usage_text(item.usage))}</div>')
    numeric = [(name, item.numbers) for name, item, _ in present if item.numbers]
    labelled = [(name, item.labels) for name, item, _ in present if item.labels]
    chart = labels_svg(labelled, f"{metric}: label counts") if labelled else histogram_svg(numeric, f"{metric}: score distribution")
    lines.append(chart or '<p class="muted">no scores to chart</p>')
    lines.extend(_difference(diff) for diff in diffs)
    for name, item, _ in present:
        prefix = f"{name}: " if len(names) > 1 else ""
        lines.append(_problems(f"{prefix}errors ({item.n_error})", item.errors, "error"))
        lines.append(_problems(f"{prefix}skipped ({item.n_skipped})", item.skips, "skipped"))
    return f'<article class="card" id="metric-{esc(metric)}"><h3>{esc(metric)}</h3>{"".join(lines)}</article>'


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _difference(diff: Difference) -> str:
    interval = "n/a" if diff.low is None else f"[{_signed(diff.low)}, {_signed(diff.high)}]"
    changed = [row for row in diff.rows if row[1] != row[2]][:5]
    changes = "".join(f"<li>{esc(key)}: {esc(format_number(a))} → {esc(format_number(b))}</li>"
                      for key, a, b in changed)
    return (f'<div class="diff"><div><b>{esc(diff.other)} − {esc(diff.baseline)}</b>: mean difference '
            f"<b>{esc(_signed(diff.mean_delta))}</b>, {CONFIDENCE:.0%} interval {esc(interval)}, "
            f"{diff.n_pairs} paired row(s): {diff.higher} higher, {diff.lower} lower, {diff.same} equal</div>"
            f'<div class="verdict">{esc(diff.verdict)}</div>'
            + (f'<div class="muted small">largest changes:</div><ul class="changes">{changes}</ul>' if changes else "")
            + "</div>")


def _rows_section(aligned: list[tuple[str, list[Row | None]]], names: list[str], metrics: list[str]) -> str:
    options = "".join(f'<option value="{i}">{esc(metric)}</option>' for i, metric in enumerate(metrics))
    controls = ('<div class="controls"><input id="filter" type="search" placeholder="filter rows by text">'
                '<select id="only"><option value="">all rows</option><option value="error">rows with an error</option>'
                '<option value="skipped">rows with a skipped cell</option><option value="missing">rows not finished</option>'
                f'</select><select id="sort"><option value="">in data order</option>{options}</select>'
                '<button id="expand" type="button">expand all</button><button id="collapse" type="button">collapse all</button>'
                '<span id="shown" class="muted"></span></div>')
    rows = "".join(render_row(key, found, names, metrics) for key, found in aligned)
    sort_note = f" (sorting uses {esc(names[-1])}'s scores, lowest first)" if len(names) > 1 else " (sorting: lowest score first)"
    return (f'<h2>Rows ({len(aligned)})</h2><p class="muted">Click a row for its data, scores, reasons and verdicts'
            f"{sort_note}.</p>{controls}<section id=\"rows\">{rows}</section>")


__all__ = ["align", "render_page"]
