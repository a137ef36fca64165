"""Charts as inline SVG: score histograms and label counts, one colour per run. No scripts, no
external references; every text is escaped."""

from __future__ import annotations

from collections import Counter
from html import escape

from assay.report.stats import format_number, histogram

COLOURS = ("#3566c9", "#e07b39", "#2f9a5a", "#a24bb8", "#c23b4a", "#6b7280")
WIDTH, HEIGHT = 360, 170
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 10, 34


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def _frame(title: str, body: list[str], max_count: int) -> str:
    plot_bottom = HEIGHT - BOTTOM
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">',
             f"<title>{escape(title)}</title>",
             f'<line x1="{LEFT}" y1="{plot_bottom}" x2="{WIDTH - RIGHT}" y2="{plot_bottom}" class="axis"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{plot_bottom}" class="axis"/>',
             f'<text x="{LEFT - 4}" y="{TOP + 8}" text-anchor="end" class="tick">{max_count}</text>',
             f'<text x="{LEFT - 4}" y="{plot_bottom}" text-anchor="end" class="tick">0</text>']
    parts.extend(body)
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(series: list[tuple[str, list[float]]], title: str, bins: int = 10) -> str:
    """Grouped bars: for each bin, one bar per run (`series` = [(run name, numbers)])."""
    pooled = [value for _, numbers in series for value in numbers]
    edges, _ = histogram(pooled, bins)
    if not edges:
        return ""
    start, width = edges[0][0], edges[0][1] - edges[0][0]
    counts = []
    for _, numbers in series:
        found = [0] * len(edges)
        for value in numbers:
            found[min(len(edges) - 1, max(0, int(round((value - start) / width, 9))))] += 1
        counts.append(found)
    top = max(max(found) for found in counts) or 1
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(edges)
    bar = max(1.0, (slot - 2) / len(series))
    body = []
    for position, (low, high, _) in enumerate(edges):
        for which, (name, _) in enumerate(series):
            count = counts[which][position]
            height = plot_height * count / top
            x = LEFT + position * slot + 1 + which * bar
            y = TOP + plot_height - height
            tip = f"{name}: {format_number(low, 2)} to {format_number(high, 2)}: {count} row(s)"
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{height:.1f}" '
                        f'fill="{colour(which)}"><title>{escape(tip)}</title></rect>')
    for position in range(0, len(edges) + 1, max(1, len(edges) // 5)):
        value = edges[0][0] + position * (edges[0][1] - edges[0][0])
        x = LEFT + position * slot
        body.append(f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle" class="tick">'
                    f"{escape(format_number(value, 2))}</text>")
    body.append(f'<text x="{LEFT + plot_width / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle" class="tick">'
                "score</text>")
    return _frame(title, body, top)


def labels_svg(series: list[tuple[str, Counter]], title: str) -> str:
    """Vertical bars per label (most frequent first), one bar per run."""
    labels = list(dict.fromkeys(label for _, counts in series for label, _ in counts.most_common()))[:12]
    if not labels:
        return ""
    top = max(counts[label] for _, counts in series for label in labels) or 1
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(labels)
    bar = max(1.0, (slot - 6) / len(series))
    body = []
    for position, label in enumerate(labels):
        for which, (name, counts) in enumerate(series):
            count = counts[label]
            height = plot_height * count / top
            x = LEFT + position * slot + 3 + which * bar
            body.append(f'<rect x="{x:.1f}" y="{TOP + plot_height - height:.1f}" width="{bar:.1f}" '
                        f'height="{height:.1f}" fill="{colour(which)}">'
                        f"<title>{escape(f'{name}: {label}: {count} row(s)')}</title></rect>")
        shown = label if len(label) <= 14 else label[:13] + "…"
        body.append(f'<text x="{LEFT + (position + 0.5) * slot:.1f}" y="{HEIGHT - BOTTOM + 14}" '
                    f'text-anchor="middle" class="tick">{escape(shown)}</text>')
    return _frame(title, body, top)


__all__ = ["COLOURS", "colour", "histogram_svg", "labels_svg"]
