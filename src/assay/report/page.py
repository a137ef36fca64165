"""The HTML page: header with usage, one card per metric, the comparison, the row drill-down.

One self-contained document: inline CSS, one inline script (allowed by its hash in the page's
Content-Security-Policy, which also forbids every network fetch), inline SVG charts. The markup
is the Jinja2 templates under `templates/` (package data), rendered with autoescaping: this
module and `rows.py` / `svg.py` hand them plain data, and the engine escapes every datum. The
only markup not from a template is the page's own stylesheet and script (`assets.py`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import jinja2
from markupsafe import Markup

from assay._version import __version__
from assay.report.assets import SCRIPT, STYLE
from assay.report.compare import CONFIDENCE, Difference, difference, pair_rows
from assay.report.model import Row, Run
from assay.report.rows import row_view
from assay.report.stats import MetricStats, Problem, format_number, metric_stats
from assay.report.svg import colour, histogram_chart, labels_chart

View = dict[str, Any]


class _Environment(jinja2.Environment):
    """Views are plain dicts: `view.key` reads the key first (fast, and a key named like a dict
    method, `items`, is the key)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The report's templates; autoescaping on for every one of them."""
    return _Environment(
        loader=jinja2.PackageLoader("assay.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source for the page's one script: 'sha256-<base64 digest of its exact text>'."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode(
        "ascii"
    )


def content_security_policy() -> str:
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '{script_hash()}'"


def render_page(runs: list[Run], sections: Sequence[Any] = ()) -> str:
    """The page over `runs`; `sections` (objects with `__html__`, e.g. alignment reports) follow
    the metric cards, as markup their own templates escaped."""
    metrics = list(dict.fromkeys(name for run in runs for name in run.metrics))
    names = [run.name for run in runs]
    titled = names or [f"alignment of {getattr(s, 'metric', 'a judge')}" for s in sections]
    matched_by, aligned = align(runs)
    cards = []
    for metric in metrics:
        stats = [metric_stats(run, metric) if metric in run.metrics else None for run in runs]
        diffs = [
            difference(runs[0], run, metric, pair_rows(runs[0], run)[1])
            for run in runs[1:]
            if metric in run.metrics and metric in runs[0].metrics
        ]
        cards.append(card_view(metric, names, stats, diffs, _trust_lines(runs, metric)))
    return (
        environment()
        .get_template("page.html.j2")
        .render(
            title=f"assay report: {' vs '.join(titled)}",
            made=_now(),
            version=__version__,
            policy=content_security_policy(),
            style=Markup(STYLE),  # the package's own constants, not data
            script=Markup(SCRIPT),
            runs=[_run_box(run, i, len(runs) > 1) for i, run in enumerate(runs)],
            several=len(runs) > 1,
            matched_by=matched_by,
            confidence=f"{CONFIDENCE:.0%}",
            cards=cards,
            metrics=metrics,
            last_run=names[-1] if names else "",
            sections=[Markup(section.__html__()) for section in sections],
            rows=[row_view(key, found, names, metrics) for key, found in aligned],
        )
    )


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def align(runs: list[Run]) -> tuple[str, list[tuple[str, list[Row | None]]]]:
    """Rows of every run lined up with the first run's (by id or by position)."""
    if not runs:  # a page of alignment sections only
        return "position", []
    if len(runs) == 1:
        return "position", [(row.key, [row]) for row in runs[0].rows]
    table: dict[str, list[Row | None]] = {
        row.key: [row] + [None] * (len(runs) - 1) for row in runs[0].rows
    }
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
    text = (
        f"{usage.get('input_tokens', 0):,} input + {usage.get('output_tokens', 0):,} output tokens, "
        f"{usage.get('requests', 0):,} request(s)"
    )
    if usage.get("cached_requests"):
        text += f" (+{usage['cached_requests']:,} from cache)"
    cost = usage.get("cost") or 0.0
    text += f"; cost ${cost:.4f}" if cost or not usage.get("unpriced_requests") else ""
    if usage.get("unpriced_requests"):
        text += f"; {usage['unpriced_requests']:,} request(s) to a model without a known price (not in the cost)"
    return text


def _run_box(run: Run, index: int, several: bool) -> View:
    facts = [("kind", run.kind), ("source", run.path), *run.info.items()]
    if run.usage is not None or run.kind == "run directory":
        facts.append(("tokens and cost", _usage_text(run.usage)))
    return {
        "name": run.name,
        "colour": colour(index) if several else None,
        "role": " · baseline" if several and index == 0 else "",
        "facts": facts,
    }


def _mean_text(item: MetricStats) -> str:
    if item.mean is None:
        if item.labels:
            return ", ".join(f"{label}: {count}" for label, count in item.labels.most_common(4))
        return "n/a"
    return ("pass rate " if item.from_labels else "") + f"{item.mean:.3f}"


def _problems(title: str, problems: list[Problem], css: str) -> list[View]:
    return [{"title": title, "css": css, "entries": problems}] if problems else []


def _trust_lines(runs: list[Run], metric: str) -> list[str]:
    """Per run that recorded how `metric` was judged (a run directory's run.json), its judge
    card's headline, or that nothing was measured for that judge and configuration."""
    from assay.benchmark.cards import card_for_spec

    lines = []
    for run in runs:
        spec = run.specs.get(metric)
        if spec is None or not isinstance(spec.get("llm"), dict):
            continue  # no judge, or a results file that does not say which
        card = card_for_spec(spec)
        prefix = f"{run.name}: " if len(runs) > 1 else ""
        judge = spec["llm"].get("model") or "this judge"
        text = card.headline() if card else f"{metric} with {judge}: {UNMEASURED}"
        lines.append(prefix + text)
    return lines


UNMEASURED = (
    "agreement with people unmeasured for this judge and configuration "
    "(assay benchmark, then assay cards build, measures it)"
)


def card_view(
    metric: str,
    names: list[str],
    stats: list[MetricStats | None],
    diffs: list[Difference],
    trust: list[str] | None = None,
) -> View:
    several = len(names) > 1
    present = [(names[i], item, i) for i, item in enumerate(stats) if item is not None]
    lines, problems = [], []
    for name, item, index in present:
        counts = f"{item.n_skipped} skipped, {item.n_error} error(s)" + (
            f", {item.n_missing} not run" if item.n_missing else ""
        )
        lines.append(
            {
                "name": name,
                "colour": colour(index) if several else None,
                "mean": _mean_text(item),
                "coverage": item.coverage_text,
                "percent": f"{item.coverage:.0%}",
                "counts": counts,
                "usage": _usage_text(item.usage)
                if item.usage and item.usage.get("requests")
                else None,
            }
        )
        prefix = f"{name}: " if several else ""
        problems += _problems(f"{prefix}errors ({item.n_error})", item.errors, "error")
        problems += _problems(f"{prefix}skipped ({item.n_skipped})", item.skips, "skipped")
    numeric = [(name, item.numbers) for name, item, _ in present if item.numbers]
    labelled = [(name, item.labels) for name, item, _ in present if item.labels]
    chart = (
        labels_chart(labelled, f"{metric}: label counts")
        if labelled
        else histogram_chart(numeric, f"{metric}: score distribution")
    )
    return {
        "metric": metric,
        "lines": lines,
        "chart": chart,
        "problems": problems,
        "differences": [_difference(diff) for diff in diffs],
        "trust": trust or [],
    }


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _difference(diff: Difference) -> View:
    changed = [row for row in diff.rows if row[1] != row[2]][:5]
    return {
        "other": diff.other,
        "baseline": diff.baseline,
        "mean": _signed(diff.mean_delta),
        "confidence": f"{CONFIDENCE:.0%}",
        "interval": "n/a" if diff.low is None else f"[{_signed(diff.low)}, {_signed(diff.high)}]",
        "n_pairs": diff.n_pairs,
        "higher": diff.higher,
        "lower": diff.lower,
        "same": diff.same,
        "verdict": diff.verdict,
        "changes": [(key, format_number(a), format_number(b)) for key, a, b in changed],
    }


__all__ = [
    "align",
    "card_view",
    "content_security_policy",
    "environment",
    "render_page",
    "script_hash",
]
