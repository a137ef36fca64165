"""Fitting a decision threshold on training scores, and choosing fixed examples.

The threshold is the cut `score >= threshold` with the best balanced accuracy (or accuracy, or
F1) on the training rows; among equally good cuts the one nearest the uncalibrated default wins,
so a tie never drifts to an extreme.

With several candidate numbers of examples (`k="auto"` or a list), each is calibrated on the
training rows and the best objective wins, fewer examples winning within `K_TOLERANCE`.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from assay.alignment.labels import LabeledSet
from assay.alignment.scoring import (
    CallBudget,
    LabelKind,
    ascore_rows,
    normalise_label,
    numeric_value,
)
from assay.errors import UsageError
from assay.metrics.aligned import AlignedExample, AlignedState, nearest_examples
from assay.stats.classification import roc_auc

Objective = Literal["balanced_accuracy", "accuracy", "f1"]


def rate(decisions: Sequence[bool], labels: Sequence[int], objective: Objective) -> float:
    tp = sum(d and y == 1 for d, y in zip(decisions, labels, strict=True))
    tn = sum((not d) and y == 0 for d, y in zip(decisions, labels, strict=True))
    pos = sum(labels)
    neg = len(labels) - pos
    if objective == "accuracy":
        return (tp + tn) / len(labels)
    if objective == "f1":
        fp, fn = neg - tn, pos - tp
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return 0.5 * (tp / pos + tn / neg)


def calibrate_threshold(
    scores: Sequence[float],
    labels: Sequence[int],
    objective: Objective = "balanced_accuracy",
    prior: float = 0.5,
) -> tuple[float, float]:
    """(threshold, objective value): the cut `score >= threshold` that best separates the labels.
    Candidates are the midpoints between neighbouring distinct scores and the lowest score (all
    yes); among equally good cuts, the one nearest `prior` (the uncalibrated default) wins."""
    if len(scores) != len(labels) or not scores:
        raise UsageError("calibration needs as many scores as labels, and at least one")
    if len(set(labels)) < 2:
        raise UsageError("calibration needs rows of both labels")
    distinct = sorted(set(scores))
    candidates = [distinct[0]] + [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    candidates.append(distinct[-1] + 1e-9)  # all no
    best: tuple[float, float] | None = None
    for threshold in candidates:
        value = rate([s >= threshold for s in scores], labels, objective)
        if (
            best is None
            or value > best[1] + 1e-12
            or (abs(value - best[1]) <= 1e-12 and abs(threshold - prior) < abs(best[0] - prior))
        ):
            best = (threshold, value)
    assert best is not None
    return best


def default_threshold(metric: Any) -> float:
    """The cut a score judge is read at before calibration: the middle of its scale."""
    for attr in ("score_range",):
        if hasattr(metric, attr):
            low, high = getattr(metric, attr)
            return (low + high) / 2
    rubric = getattr(metric, "rubrics", None)
    if isinstance(rubric, dict) and rubric:
        from assay.metrics.general.rubrics import rubric_scores

        scores = rubric_scores(rubric)
        return (scores[0] + scores[-1]) / 2
    return 0.5


def pick_fixed(pool: list[AlignedExample], k: int, balance: bool, seed: int) -> list[str]:
    """Examples shown to every row: those nearest the centre of the pool, labels taking turns."""
    vectors = [e.vector for e in pool if e.vector]
    if vectors and len(vectors) == len(pool):
        centre = [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]
        chosen = nearest_examples(pool, centre, k, balance=balance)
    else:
        shuffled = list(pool)
        random.Random(seed).shuffle(shuffled)
        chosen = nearest_examples(shuffled, None, k, balance=balance)
    return [e.id for e in chosen]


# `k="auto"` tries no examples (a threshold alone) against the documented default of three: on a
# small judge the examples can cost ranking quality that a calibrated cut alone keeps.
AUTO_K = (0, 3)
# Among candidates this close on the training objective, the one with fewer examples wins: the
# difference is within the noise of a few hundred rows, and fewer examples mean shorter prompts.
K_TOLERANCE = 0.01


def k_candidates(k: Any) -> tuple[int, ...]:
    """The numbers of examples to try: one whole number, several (any sequence), or "auto"."""
    refusal = UsageError(
        "max_similar_examples (k) must be a whole number >= 0, a list of them, or 'auto'; "
        f"got {k!r}"
    )
    if isinstance(k, str):
        if k.strip().lower() == "auto":
            return AUTO_K
        raise refusal
    raw = list(k) if isinstance(k, Sequence) else [k]
    values = []
    for value in raw:
        if isinstance(value, bool):
            raise refusal
        try:
            values.append(operator.index(value))  # int, numpy integers; never 2.5
        except TypeError:
            raise refusal from None
    if not values or min(values) < 0:
        raise refusal
    return tuple(sorted(set(values)))


@dataclass
class Calibration:
    """What calibrating one candidate on the training rows found."""

    value: float | None = None  # the objective at the fitted threshold; None without one
    threshold: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "train_value": self.value,
            "threshold": self.threshold,
            "train_roc_auc": self.provenance.get("train_roc_auc"),
            "calibration_failures": self.provenance.get("calibration_failures"),
        }


def choose_candidate(
    fitted: list[tuple[AlignedState, Calibration]],
) -> tuple[AlignedState, Calibration]:
    """The candidate with the best training objective; fewer examples win within K_TOLERANCE."""
    scored = [(state, fit, fit.value) for state, fit in fitted if fit.value is not None]
    if not scored:
        state, fit = fitted[-1]
        return state, fit
    best = max(value for _, _, value in scored)
    state, fit = min(
        ((s, f) for s, f, value in scored if value >= best - K_TOLERANCE),
        key=lambda pair: pair[0].k,
    )
    state.threshold = fit.threshold
    return state, fit


async def calibrate_on_rows(
    metric: Any,
    state: AlignedState,
    rows: LabeledSet,
    kind: LabelKind,
    *,
    objective: Objective,
    llm: Any,
    budget: CallBudget,
    concurrency: int,
    show_progress: bool,
) -> Calibration:
    """Score every training row with `state` (never showing a row its own group's examples)
    and fit the threshold with the best `objective`."""
    found = Calibration()
    trial = copy.copy(metric).set_alignment(state)
    scores = await ascore_rows(
        trial,
        rows,
        llm=llm,
        budget=budget,
        concurrency=concurrency,
        exclude_own_group=True,
        description=f"calibrating {metric.name}" + (f" (k={state.k})" if state.k else ""),
        show_progress=show_progress,
    )
    labels = [normalise_label(kind, example.label) for example in rows]
    pairs = [
        (value, label)
        for score, label in zip(scores, labels, strict=True)
        if score.ok and (value := numeric_value(score.value)) is not None
    ]
    failed = [s for s in scores if not s.ok]
    found.provenance["calibration_rows"] = len(pairs)
    found.provenance["calibration_failures"] = len(failed)
    if failed:
        found.notes.append(
            f"{len(failed)} training row(s) failed to score ({failed[0].error_type}: {failed[0].error})"
        )
    if len({label for _, label in pairs}) < 2:
        found.notes.append("no threshold: the scored training rows do not hold both labels")
        return found
    auc = roc_auc(np.array([y for _, y in pairs]), np.array([s for s, _ in pairs]))
    found.provenance["train_roc_auc"] = auc
    if auc is not None and auc < 0.5:  # both labels are present: it is defined
        found.notes.append(
            f"the scores run against the labels on the training rows (ROC-AUC "
            f"{auc:.2f}): a threshold reads score >= threshold as label 1"
            + (
                f", and {type(metric).__name__} is better when lower, so label 1 "
                "should mean a high score; flip the labels with mapping={0: 1, 1: 0}"
                if getattr(metric, "better", "higher") == "lower"
                else "; check what label 1 means"
            )
        )
    found.threshold, found.value = calibrate_threshold(
        [s for s, _ in pairs],
        [y for _, y in pairs],
        objective,
        default_threshold(metric),
    )
    found.provenance["calibration"] = {"objective": objective, "train_value": found.value}
    return found


async def choose_k(
    metric: Any,
    state: AlignedState,
    rows: LabeledSet,
    kind: LabelKind,
    candidates: Sequence[int],
    *,
    pool: list[AlignedExample],
    balance: bool,
    seed: int,
    objective: Objective,
    llm: Any,
    max_calls: int | None,
    concurrency: int,
    show_progress: bool,
    provenance: dict[str, Any],
    notes: list[str],
) -> tuple[AlignedState, int]:
    """Calibrate each candidate number of examples on the training rows and keep the best
    (`choose_candidate`). Each candidate gets an equal share of `max_calls`, so the first cannot
    spend the budget of the others; the losers' notes are kept, prefixed with their k. Returns the
    chosen state (threshold set) and the judge calls spent."""
    share = None if max_calls is None else max(1, max_calls // len(candidates))
    fitted: list[tuple[AlignedState, Calibration]] = []
    spent = 0
    for candidate in candidates:
        trial = dataclasses.replace(
            state,
            k=candidate,
            fixed_ids=pick_fixed(pool, candidate, balance, seed)
            if state.selection == "fixed"
            else [],
        )
        budget = CallBudget(share)
        found = await calibrate_on_rows(
            metric,
            trial,
            rows,
            kind,
            objective=objective,
            llm=llm,
            budget=budget,
            concurrency=concurrency,
            show_progress=show_progress,
        )
        spent += budget.used
        fitted.append((trial, found))
    chosen_state, chosen = choose_candidate(fitted)
    provenance.update(chosen.provenance)
    notes.extend(chosen.notes)
    if len(fitted) > 1:
        for trial, found in fitted:
            if trial is not chosen_state:
                notes.extend(f"k={trial.k}: {note}" for note in found.notes)
        provenance["k_candidates"] = {str(trial.k): found.summary() for trial, found in fitted}
        covered = {str(t.k): f.provenance.get("calibration_rows") for t, f in fitted}
        if len(set(covered.values())) > 1:
            counts = ", ".join(f"k={k}: {n}" for k, n in covered.items())
            notes.append(
                f"the k candidates were calibrated on different numbers of rows ({counts}); "
                "raise max_calls for a like-for-like choice"
            )
        notes.append(
            f"k chosen on the training rows: {chosen_state.k} of {list(candidates)}"
            + (
                f" ({objective} {chosen.value:.3f}; fewer examples win within {K_TOLERANCE})"
                if chosen.value is not None
                else " (no candidate could be calibrated: the largest is used)"
            )
        )
    return chosen_state, spent


__all__ = [
    "AUTO_K",
    "K_TOLERANCE",
    "Calibration",
    "Objective",
    "calibrate_on_rows",
    "calibrate_threshold",
    "choose_candidate",
    "choose_k",
    "default_threshold",
    "k_candidates",
    "pick_fixed",
    "rate",
]
