"""How far to trust each criterion's scores, as the API answers it and the pages show it
(`trust`): over a window and a condition, per criterion,

- `judge`: what produced its scores and that judge's reliability card, or why there is none
  (`trust_cards.py`);
- `estimate`: with people's labels on some judged traces, the judge's mean, the labels' mean and
  the mean corrected by the labels (prediction-powered inference, `assay.stats.ppi_mean`) with
  its 95% interval, and how many more labels would halve that interval. Labels given through a
  queue that samples carry the inverse of the chance the queue kept their trace as weights, so
  the estimate stays unbiased when the uncertain traces were likelier to be reviewed;
- `alert`: whether the judge agrees with people on the latest labels as well as its card says.
  The same figure as the card's (ROC-AUC or balanced accuracy at 0.5, on yes/no labels), with
  the card's interval method (a stratified bootstrap), and the alert is raised only when the
  whole interval of the recent figure lies below the card's interval: a test on the intervals,
  never a comparison of two points.

Labels are read as numbers: true/false as 1/0, numbers as they are; a categorical label has no
number and is counted, never used. Labels from a sampling queue weigh 1 / their trace's chance
of review in the agreement figure too: the queue picked the traces its judge was least sure of,
where any judge agrees least, and unweighted they would make the judge look worse than it is."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assay.platform.server.storage.dashboard_window import Window
from assay.platform.server.storage.repos import iso
from assay.platform.server.storage.trust import LatestLabel, TrustRepo
from assay.platform.server.storage.trust_cards import evaluator_names, judge_of

RECENT = 200  # labels the agreement figure is computed on: the latest ones
MIN_RECENT = 10  # below this (or with one class only) the figure says too little to test
COMPARABLE = ("roc_auc", "balanced_accuracy")  # card figures a trace's yes/no label can give
THRESHOLD = 0.5  # the cards' decision threshold (cards are built only from runs at 0.5)
RESAMPLES = 2000  # as the benchmark's stratified bootstrap, seed 0


def label_number(value: Any) -> float | None:
    """A label as a number: a boolean as 1/0, a finite number as itself, anything else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _weight(label: LatestLabel) -> float:
    chance = label.inclusion_probability
    return 1.0 / chance if chance is not None and 0 < chance < 1 else 1.0


def estimate_json(scores: dict[str, float], labels: dict[str, LatestLabel]) -> dict[str, Any]:
    """The judge's mean, the labels' mean and the PPI-corrected mean with its 95% interval, from
    the judge's numbers `scores` (trace -> value) and people's `labels` (trace -> label)."""
    from assay.stats import ppi_mean

    numbers = {t: label_number(lab.value) for t, lab in labels.items()}
    usable = {t: v for t, v in numbers.items() if v is not None and t in scores}
    labelled = sorted(usable)
    taken = set(labelled)
    unlabelled = sorted(t for t in scores if t not in taken)
    weights = [_weight(labels[t]) for t in labelled]
    weighted = any(w != 1.0 for w in weights)
    found = ppi_mean(
        [usable[t] for t in labelled],
        [scores[t] for t in labelled],
        [scores[t] for t in unlabelled],
        weights=weights if weighted else None,
    )
    more = None
    if found.labels_to_halve is not None:
        more = max(0, found.labels_to_halve - found.n)
    return {
        "judge_mean": found.judge_mean,
        "judged": len(scores),
        "labels_mean": found.labels_mean,
        "labelled": found.n,
        "value": found.value,
        "low": found.low,
        "high": found.high,
        "method": found.method,
        "lam": found.lam,
        "weighted": weighted,
        "labels_to_halve": found.labels_to_halve,
        "more_labels_to_halve": more,
        "labels_not_numbers": sum(v is None for v in numbers.values()),
        "labels_without_score": sum(v is not None and t not in scores for t, v in numbers.items()),
    }


@dataclass(frozen=True)
class Recent:
    """One labelled and judged trace for the agreement figure; `weight` is 1 / the chance its
    queue gave it (1 when not sampled)."""

    at: datetime
    trace_id: str
    label: int
    score: float
    weight: float = 1.0


def weighted_roc_auc(labels: Any, scores: Any, weights: Any) -> float | None:
    """ROC-AUC with each row counted `weight` times: the weighted share of (positive, negative)
    pairs the scores order rightly, a tie counting one half. None with one class only."""
    import numpy as np

    y, s, w = np.asarray(labels), np.asarray(scores, dtype=float), np.asarray(weights, dtype=float)
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return None
    above = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
    pairs = w[pos][:, None] * w[neg][None, :]
    return float((above * pairs).sum() / pairs.sum())


def weighted_balanced_accuracy(labels: Any, scores: Any, weights: Any) -> float | None:
    """(weighted true positive rate + weighted true negative rate) / 2 at `THRESHOLD`."""
    import numpy as np

    y, s, w = np.asarray(labels), np.asarray(scores, dtype=float), np.asarray(weights, dtype=float)
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return None
    said = s >= THRESHOLD
    tpr = (w[pos] * said[pos]).sum() / w[pos].sum()
    tnr = (w[neg] * ~said[neg]).sum() / w[neg].sum()
    return float((tpr + tnr) / 2)


def _card_figure(card: Any) -> Any:
    """The card's figure the recent labels are tested against: a comparable one with an
    interval, measured on a held-out split first, then on the most rows."""
    usable = [m for m in card.agreement if m.figure in COMPARABLE and m.low is not None and m.n > 0]
    if not usable:
        return None
    return max(usable, key=lambda m: (m.split == "test", m.n, m.figure == "roc_auc"))


def recent_figure(figure: str, rows: list[Recent]) -> Any:
    """`figure` (roc_auc or balanced_accuracy at 0.5) of `rows` with the card's interval method:
    a bootstrap resampling each class on its own, 2000 resamples, seed 0. Rows from a sampling
    queue are weighted by 1 / their chance of review (undoing the queue's preference for the
    traces its judge was unsure of), in every resample too."""
    return _bootstrapped(
        figure,
        tuple(r.label for r in rows),
        tuple(r.score for r in rows),
        tuple(r.weight for r in rows) if any(r.weight != 1.0 for r in rows) else None,
    )


@functools.lru_cache(maxsize=64)
def _bootstrapped(
    figure: str,
    labels: tuple[int, ...],
    scores: tuple[float, ...],
    weights: tuple[float, ...] | None,
) -> Any:
    # about 0.7 s for 200 rows on this machine: a reload of the same figures is answered here
    from assay.stats.bootstrap import bootstrap
    from assay.stats.classification import balanced_accuracy, roc_auc

    strata = list(labels)
    if weights is not None:
        weighted = weighted_roc_auc if figure == "roc_auc" else weighted_balanced_accuracy
        weighted_columns: list[list[Any]] = [list(labels), list(scores), list(weights)]
        return bootstrap(weighted, weighted_columns, resamples=RESAMPLES, seed=0, strata=strata)

    def statistic(y: Any, s: Any) -> float | None:
        if figure == "roc_auc":
            return roc_auc(y, s)
        return balanced_accuracy(y, s >= THRESHOLD)

    columns: list[list[Any]] = [list(labels), list(scores)]
    return bootstrap(statistic, columns, resamples=RESAMPLES, seed=0, strata=strata)


def alert_json(
    card: Any, scores: dict[str, float], labels: dict[str, LatestLabel]
) -> dict[str, Any]:
    """Whether agreement on the latest yes/no labels falls below the card's interval."""
    measured = _card_figure(card)
    if measured is None:
        return {
            "status": "no_comparable_figure",
            "message": "the card's agreement figures cannot be measured on labels of single "
            "traces (they need ROC-AUC or balanced accuracy on yes/no labels)",
        }
    rows: list[Recent] = []
    for trace_id, label in labels.items():
        number = label_number(label.value)
        if number not in (0.0, 1.0) or trace_id not in scores:
            continue
        rows.append(
            Recent(label.created_at, trace_id, int(number or 0), scores[trace_id], _weight(label))
        )
    latest = sorted(rows, key=lambda r: (r.at, r.trace_id), reverse=True)[:RECENT]
    rows = sorted(latest, key=lambda r: r.trace_id)  # a fixed order: the bootstrap follows it
    card_part = {
        "figure": measured.figure,
        "label": measured.label,
        "value": measured.value,
        "low": measured.low,
        "high": measured.high,
        "n": measured.n,
        "suite": measured.suite,
        "split": measured.split,
    }
    answer: dict[str, Any] = {"card": card_part, "recent": None}
    classes = {r.label for r in rows}
    if len(rows) < MIN_RECENT or len(classes) < 2:
        answer["status"] = "too_few_labels"
        answer["message"] = (
            f"{len(rows)} recent yes/no labels on judged traces"
            f"{' of one class only' if rows and len(classes) < 2 else ''}: at least "
            f"{MIN_RECENT} of both classes are needed to test the agreement"
        )
        return answer
    found = recent_figure(measured.figure, rows)
    answer["recent"] = {
        "value": found.value,
        "low": found.low,
        "high": found.high,
        "n": found.n,
        "since": iso(min(r.at for r in rows)),
        "weighted": any(r.weight != 1.0 for r in rows),
    }
    below = found.high is not None and found.high < measured.low
    answer["status"] = "below" if below else "not_below"

    def shown(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    recent_text = (
        f"{measured.label} {shown(found.value)} [{shown(found.low)}, {shown(found.high)}] "
        f"on the {found.n} latest labels"
        + (" (weighted by 1 / their chance of review)" if answer["recent"]["weighted"] else "")
    )
    card_text = (
        f"{shown(measured.value)} [{shown(measured.low)}, {shown(measured.high)}] on "
        f"{measured.suite} ({measured.split}, n={measured.n})"
    )
    answer["message"] = (
        f"agreement with people is below what the judge's card promises: {recent_text}, "
        f"against {card_text}"
        if below
        else f"agreement with people is within what the card promises or above it: "
        f"{recent_text}, card {card_text}"
    )
    return answer


def trust(
    session: Any, project_id: int, window: Window, where: Any = None, criterion: str | None = None
) -> dict[str, dict[str, Any]]:
    """Criterion -> its trust figures, for every criterion with a numeric score or a label on
    the window's traces (or for `criterion` alone, always present)."""
    repo = TrustRepo(session, project_id, window, where)
    labels: dict[str, dict[str, LatestLabel]] = {}
    for label in repo.latest_labels(criterion):
        labels.setdefault(label.criterion, {})[label.trace_id] = label
    with_labels = sorted(labels)
    # a row per judged trace only for the criteria with labels (the estimate needs them); the
    # others' sources are counted in the database
    scores: dict[str, dict[str, float]] = {}
    sources: dict[str, dict[str, int]] = {}
    for trace_id, name, value, source in repo.latest_scores(with_labels):
        if math.isfinite(value):
            scores.setdefault(name, {})[trace_id] = value
            counted = sources.setdefault(name, {})
            counted[source] = counted.get(source, 0) + 1
    if criterion is None or criterion not in labels:
        only = None if criterion is None else [criterion]
        sources.update(repo.score_sources(only, with_labels))
    names = [criterion] if criterion is not None else sorted(set(sources) | set(labels))
    saved = repo.criteria(names)
    judges = repo.evaluator_judges(evaluator_names([s for v in sources.values() for s in v]))
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        judged, labelled = scores.get(name, {}), labels.get(name, {})
        judge, card = judge_of(name, sources.get(name, {}), saved.get(name), judges)
        found[name] = {
            "criterion": name,
            "saved_criterion_id": saved[name].id if name in saved else None,
            "judge": judge,
            "estimate": estimate_json(judged, labelled) if labelled else None,
            "alert": alert_json(card, judged, labelled) if card is not None and labelled else None,
        }
    return found


__all__ = ["COMPARABLE", "MIN_RECENT", "RECENT", "alert_json", "estimate_json", "trust"]
