"""`fit_cascade`: a band and tolerance chosen on rows both judges answered once.

Two scripted OpenAI-compatible judges on loopback: the first answers each statement with the
P(yes) written into it ("p=0.62"); the stronger one agrees where the first is sure and says "no"
to three of the four statements the first is unsure of. The fit must keep the band that sends
exactly those four on, ask each judge each statement once (every candidate is routed from the
caches), and report how well the first judge's P(yes) predicts the stronger one's verdicts.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import evaluate
from assay.alignment import CascadeCandidate, fit_cascade
from assay.alignment.cascade_fit import band_edges, pick
from assay.errors import UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, llm_factory
from tests.models.fake_openai import FakeOpenAI, serve
from tests.models.test_cascade import Verdicts

# first judge's P(yes) -> the stronger judge's P(yes)
ROWS = [
    *[(0.95, 0.98)] * 4,
    *[(0.05, 0.02)] * 2,
    (0.6, 0.02),
    (0.65, 0.02),
    (0.7, 0.02),
    (0.62, 0.98),
]


def _p(statement: str) -> float:
    return float(re.search(r"p=(0\.\d+)", statement).group(1))  # type: ignore[union-attr]


@pytest.fixture
def judges() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    first, then = serve(), serve()
    small, strong = next(first), next(then)
    small.default = Verdicts(_p)
    strong.default = Verdicts(lambda s: dict(ROWS)[_p(s)])
    yield small, strong
    for generator in (first, then):
        generator.close()


def _llms(judges: tuple[FakeOpenAI, FakeOpenAI]) -> tuple[LLM, LLM]:
    small_server, strong_server = judges
    return (
        llm_factory(small_server.model_string("small"), cache=False),
        llm_factory(strong_server.model_string("strong"), cache=False),
    )


def _rows() -> list[dict[str, object]]:
    return [
        {
            "user_input": "q",
            "response": f"The tower {i} is tall p={p}.",
            "retrieved_contexts": [f"The tower {i} is tall and old."],
        }
        for i, (p, _) in enumerate(ROWS)
    ]


def test_the_band_kept_sends_on_the_unsure_statements_and_no_model_is_asked_twice(
    judges: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    small_server, strong_server = judges
    small, strong = _llms(judges)

    fit = fit_cascade(_rows(), Faithfulness(), first=small, then=strong, budget=0.5)

    low, high = fit.band
    assert 0.05 < low <= 0.6 and 0.7 <= high < 0.95  # the four unsure rows in, the sure ones out
    assert fit.chosen.escalated_share == pytest.approx(0.4)
    # what is left: four rows 0.95 against 0.98, two 0.05 against 0.02
    assert fit.chosen.mean_abs_difference == pytest.approx((4 * 0.03 + 2 * 0.03) / 10, abs=1e-6)
    assert fit.chosen.decisions_kept == 1.0
    # each judge answered each statement once; dozens of candidates were routed from caches
    assert len(small_server.requests) == len(ROWS) and len(strong_server.requests) == len(ROWS)
    assert len(fit.candidates) > 20
    assert small.cache is None and strong.cache is None  # the fit's caches were given back
    # first's P(yes) ranks 23 of the 25 (strong yes, strong no) pairs right
    assert fit.verdicts == len(ROWS)
    assert fit.verdict_auc.value == pytest.approx(23 / 25)
    frontier = fit.frontier()
    shares = [c.escalated_share for c in frontier]
    assert shares == sorted(shares) and frontier[-1].mean_abs_difference == 0.0
    assert "kept: band" in str(fit) and "ROC-AUC 0.92" in str(fit)

    cascade = fit.cascade()
    result = evaluate(_rows(), [Faithfulness()], llm=cascade, show_progress=False)
    assert cascade.summary().escalated_cells == 4
    assert [round(float(r["faithfulness"].value), 2) for r in result.outcomes][6:] == [
        0.02,
        0.02,
        0.02,
        0.98,
    ]


def test_a_tighter_budget_keeps_the_closest_band_within_it(
    judges: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    small, strong = _llms(judges)

    fit = fit_cascade(_rows(), Faithfulness(), first=small, then=strong, budget=0.2)

    assert fit.chosen.escalated_share <= 0.2
    within = [c for c in fit.candidates if c.escalated_share <= 0.2]
    assert fit.chosen.mean_abs_difference == min(c.mean_abs_difference for c in within)


def test_a_metric_with_a_judge_of_its_own_or_a_bad_budget_is_refused(
    judges: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    small_server, strong_server = judges
    small, strong = _llms(judges)
    with pytest.raises(UsageError, match=r"metric\.llm is set"):
        fit_cascade(_rows(), Faithfulness(llm=strong), first=small, then=strong)
    for bad in (0, 1.5, "half", True):
        with pytest.raises(UsageError, match="budget="):
            fit_cascade(_rows(), Faithfulness(), first=small, then=strong, budget=bad)
    for tolerances in ((), (0.0, 1.0), ("x",)):
        with pytest.raises(UsageError, match="tolerances="):
            fit_cascade(_rows(), Faithfulness(), first=small, then=strong, tolerances=tolerances)
    assert not small_server.requests and not strong_server.requests


def _candidate(band: tuple[float, float], escalated: float, difference: float) -> CascadeCandidate:
    return CascadeCandidate(band, 0.0, escalated, difference, 1.0, 10)


def test_pick_keeps_the_closest_within_the_budget_and_ties_go_to_fewer_escalations() -> None:
    too_costly = _candidate((0.0, 1.0), 0.9, 0.0)
    kept = _candidate((0.2, 0.95), 0.35, 0.04)
    tied_but_costlier = _candidate((0.1, 0.96), 0.38, 0.04)
    further = _candidate((0.4, 0.8), 0.2, 0.09)
    assert pick([too_costly, tied_but_costlier, further, kept], budget=0.4) is kept
    # none inside the budget: the one escalating least, so the fit still says what it did
    assert pick([too_costly, _candidate((0.4, 0.8), 0.6, 0.1)], budget=0.4).escalated_share == 0.6
    with pytest.raises(UsageError, match="no candidate"):
        pick([], budget=0.5)


def test_a_fit_that_cannot_meet_its_budget_says_so() -> None:
    from types import SimpleNamespace

    from assay.alignment.cascade_fit import CascadeFit
    from assay.stats.estimate import Estimate

    candidates = [_candidate((0.6, 0.7), 0.46, 0.17), _candidate((0.6, 0.8), 0.64, 0.16)]
    auc = Estimate(0.7, 0.65, 0.75, 411, "stratified bootstrap")
    for budget, within in ((0.5, True), (0.4, False)):
        fit = CascadeFit(
            first=SimpleNamespace(model="small"),  # type: ignore[arg-type]  # its name only
            then=SimpleNamespace(model="strong"),  # type: ignore[arg-type]  # its name only
            chosen=pick(candidates, budget),
            candidates=tuple(candidates),
            budget=budget,
            verdict_auc=auc,
            verdicts=411,
        )
        assert fit.chosen.escalated_share == 0.46
        assert fit.within_budget is within
        assert fit.to_dict()["within_budget"] is within
        assert ("OVER the budget" in str(fit)) is not within


def test_band_edges_are_quantiles_of_the_first_judges_p_yes_with_both_ends() -> None:
    edges = band_edges([i / 1000 for i in range(1001)])  # P(yes) 0.000 .. 1.000, evenly
    assert edges[0] == 0.0 and edges[-1] == 1.0 and edges == sorted(edges)
    assert 0.02 <= edges[1] <= 0.03 and 0.97 <= edges[-2] <= 0.98  # steps of 1/40
    assert len(edges) == 41
    # a first judge whose P(yes) sits in a narrow range: the edges follow it, repeats dropped
    leaning = band_edges([0.6 + i / 10_000 for i in range(1000)])
    assert all(0.6 <= e <= 0.7 for e in leaning[1:-1]) and len(set(leaning)) == len(leaning)
    with pytest.raises(UsageError, match="fewer than 2 verdict probabilities"):
        band_edges([0.7])


def test_the_first_judge_probe_routes_calls_without_probabilities_as_a_cascade_does() -> None:
    """Calls that ask no probability (a claims list) go to the stronger judge, as `Cascade`
    sends them, so the verdict prompts the fit records are the ones the cascades will send."""
    from pydantic import BaseModel

    from assay.alignment.cascade_fit import _Alone
    from assay.models import Profile, ScriptedProvider

    class Claims(BaseModel):
        claims: list[str]

    small_provider = ScriptedProvider([], profile=Profile(logprobs=True))
    strong_provider = ScriptedProvider(['{"claims": ["a"]}'], model="strong")
    probe = _Alone(LLM(small_provider), LLM(strong_provider), as_first=True, labels=("yes", "no"))
    answer = probe.generate("Split it into claims.", schema=Claims)
    assert answer.parsed == Claims(claims=["a"])
    assert small_provider.requests == [] and len(strong_provider.requests) == 1


def test_assay_cascade_fit_prints_the_fit_and_writes_it(
    judges: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path
) -> None:
    small_server, strong_server = judges
    rows = tmp_path / "dev.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in _rows()))
    out = tmp_path / "cascade.json"
    command = [sys.executable, "-m", "assay", "cascade", "fit", str(rows)]
    judges_given = [
        "--first",
        small_server.model_string("small"),
        "--then",
        strong_server.model_string("strong"),
    ]
    done = subprocess.run(
        [*command, *judges_given, "--budget", "0.5", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "kept: band" in done.stdout and "ROC-AUC 0.92" in done.stdout
    written = json.loads(out.read_text())
    assert written["chosen"]["escalated_share"] == pytest.approx(0.4)
    assert 0.05 < written["band"][0] <= 0.6 and 0.7 <= written["band"][1] < 0.95


def _routed_for_real(
    small: LLM, strong: LLM, band: tuple[float, float], tolerance: float
) -> tuple[list[float], float]:
    """One candidate through a whole evaluation, as a user's cascade would run: values, share."""
    from assay.models import Cascade

    cascade = Cascade(first=small, then=strong, band=band, tolerance=tolerance)
    result = evaluate(_rows(), [Faithfulness()], llm=cascade, show_progress=False)
    values = [float(row["faithfulness"].value) for row in result.outcomes]
    return values, cascade.summary().escalated_share or 0.0


def test_every_candidate_scores_as_a_whole_evaluation_with_its_cascade_would(
    judges: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path
) -> None:
    """The fit scores each row once per distinct set of escalated calls and lets every other
    candidate read it; a spread of candidates routed for real must agree figure for figure."""
    from assay.models.cache import ResponseCache

    small, strong = _llms(judges)
    small.cache = ResponseCache(tmp_path / "small.sqlite")
    strong.cache = ResponseCache(tmp_path / "strong.sqlite")
    fit = fit_cascade(_rows(), Faithfulness(), first=small, then=strong, budget=0.5)
    reference, _ = _routed_for_real(small, strong, (0.0, 1.0), 0.0)  # every call escalated
    assert len({c.escalated_share for c in fit.candidates}) > 3  # the grid routes differently
    for candidate in fit.candidates[:: max(1, len(fit.candidates) // 12)]:
        values, share = _routed_for_real(small, strong, candidate.band, candidate.tolerance)
        assert candidate.escalated_share == pytest.approx(share)
        difference = sum(abs(a - b) for a, b in zip(reference, values, strict=True))
        assert candidate.mean_abs_difference == pytest.approx(difference / len(values))


def test_a_row_routed_otherwise_than_its_recorded_answers_predict_is_routed_for_real(
    judges: tuple[FakeOpenAI, FakeOpenAI],
) -> None:
    """With no P(yes) recorded, every band is predicted to escalate every call, so both bands
    below would share one score per row; the first real routing contradicts the prediction and
    from then on each candidate is routed for real."""
    from assay._util.sync import run_sync
    from assay.alignment.cascade_routing import Candidates
    from assay.engine.plan import coerce_dataset

    small, strong = _llms(judges)
    candidates = Candidates(
        samples=coerce_dataset(_rows()).samples,
        metric=Faithfulness(),
        first=small,
        then=strong,
        probabilities={},  # nothing recorded: the prediction is wrong for the sure statements
        labels=("yes", "no"),
    )
    settings = [((0.0, 1.0), 0.0), ((0.99, 1.0), 0.0)]
    (everything, all_escalated), (nothing, none_escalated) = run_sync(candidates.route(settings))
    assert all_escalated == 1.0 and none_escalated == 0.0
    for (band, tolerance), found in zip(settings, (everything, nothing), strict=True):
        values, _ = _routed_for_real(small, strong, band, tolerance)
        assert [found[i] for i in range(len(ROWS))] == pytest.approx(values)
    assert nothing[0] == pytest.approx(0.95) and everything[0] == pytest.approx(0.98)
