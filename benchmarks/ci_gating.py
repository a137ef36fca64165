"""CI gating benchmark: how often a gate fails a healthy build, and catches a real drop, when
the judge is noisy. A seeded simulation; no model, no network.

    .venv/bin/python benchmarks/ci_gating.py              # 500 runs per scenario
    .venv/bin/python benchmarks/ci_gating.py --runs 200 --sizes 50

What is simulated
-----------------
* A CI run judges a suite of `n` cases with a pass/fail metric. Each case truly passes with
  probability `p` (the app's true pass rate: 0.88 healthy, 0.65 after a regression), drawn
  afresh per run, so a run is one build's suite.
* The judge is noisy: a judgement reports the case's true verdict flipped with the case's flip
  rate, 0.03 for three cases in four (clear cases) and 0.25 for the rest (borderline ones), drawn
  per case. Every judgement of a case is an independent draw (an uncached judge at temperature
  > 0). A single judgement per case is therefore biased toward 0.5: its expected pass rate is
  0.88 - 0.76 x (mean flip rate 0.085) = 0.815 for a healthy build.
* Threshold ">=0.80".

The gates
---------
* naive: one judgement per case, `mean >= 0.80`.
* assay strict / lenient: `assay.testing.assert_scores(..., mode=, ci=, repeats=3)` itself, on
  `EvaluationResult`s holding the simulated verdicts: one judgement per case first; while the
  Wilson interval of the pass rate straddles the threshold the suite is judged again (a row's
  value is then its majority verdict of 3); strict fails what is still inconclusive, lenient
  passes it. The three judgement rounds of a run are drawn up front; a gate that needs fewer
  judges fewer (counted).

Output: benchmarks/results/ci_gating.json and ci_gating.md (the table below, filled).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from assay.schema.aggregate import aggregate
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Ok
from assay.schema.result import EvaluationResult
from assay.testing import GateFailed, GateInconclusive, assert_scores
from assay.testing.runs import Runs

THRESHOLD = 0.80
CLEAR_FLIP, BORDERLINE_FLIP, BORDERLINE_SHARE = 0.03, 0.25, 0.25
RATES = {"healthy": 0.88, "regressed": 0.65}
RESULTS = Path(__file__).parent / "results"


class SimulatedRuns(Runs):
    """Runs whose further judgement rounds were drawn beforehand: the gate's re-sampling takes
    the next one, as it would re-judge the suite."""

    def __init__(self, rounds: list[EvaluationResult]) -> None:
        super().__init__(results=rounds[:1])
        self._pending = rounds[1:]

    @property
    def can_resample(self) -> bool:
        return True

    def resample(self, repeats: int) -> None:
        while len(self.results) < repeats:
            self.results.append(self._pending.pop(0))


def judged(dataset: EvaluationDataset, verdicts: np.ndarray) -> EvaluationResult:
    outcomes = [{"verdict": Ok(value=int(v))} for v in verdicts]
    return EvaluationResult(dataset, [{"name": "verdict"}], outcomes)


def gate_name(mode: str, ci: float, repeats: int) -> str:
    return f"{mode}@{ci:g}" + (f" x{repeats}" if repeats != 3 else "")


def simulate(
    size: int, rate: float, runs: int, seed: int, gates: list[tuple[str, float, int]]
) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    dataset = EvaluationDataset.from_list([{"response": f"case {i}"} for i in range(size)])
    rounds_needed = max([1, *(repeats for _, _, repeats in gates)])
    fails = {"naive": 0, **{gate_name(*gate): 0 for gate in gates}}
    judgements = {name: 0 for name in fails}
    for _ in range(runs):
        truth = (rng.random(size) < rate).astype(int)
        flip = np.where(rng.random(size) < BORDERLINE_SHARE, BORDERLINE_FLIP, CLEAR_FLIP)
        votes = np.where(rng.random((rounds_needed, size)) < flip, 1 - truth, truth)
        rounds = [judged(dataset, votes[k]) for k in range(rounds_needed)]
        naive = aggregate(rounds[0]["verdict"]).mean
        fails["naive"] += naive < THRESHOLD
        judgements["naive"] += size
        for mode, ci, repeats in gates:
            name = gate_name(mode, ci, repeats)
            gate_runs = SimulatedRuns(rounds)
            try:
                assert_scores(
                    gate_runs, {"verdict": f">={THRESHOLD}"}, mode=mode, ci=ci, repeats=repeats
                )
            except GateFailed:
                fails[name] += 1
            judgements[name] += size * len(gate_runs.results)
    return {
        name: {
            "fail_rate": fails[name] / runs,
            "judgements_per_case": judgements[name] / (runs * size),
        }
        for name in fails
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument(
        "--sizes", default="50,100,200,500,1000", help="suite sizes (cases per run)"
    )
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", default=str(RESULTS / "ci_gating"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", GateInconclusive)  # lenient passes of straddling intervals
    sizes = [int(s) for s in args.sizes.split(",")]
    gates = [
        ("strict", 0.95, 3),
        ("lenient", 0.95, 3),
        ("strict", 0.90, 3),
        ("lenient", 0.90, 3),
        ("strict", 0.95, 5),
        ("strict", 0.90, 5),
    ]
    started = time.perf_counter()
    table = {}
    for size in sizes:
        for scenario, rate in RATES.items():
            table[f"{size}:{scenario}"] = simulate(size, rate, args.runs, args.seed + size, gates)
            print(f"n={size} {scenario}: " + json.dumps(table[f"{size}:{scenario}"]), flush=True)
    document = {
        "benchmark": "ci_gating",
        "runs_per_scenario": args.runs,
        "seed": args.seed,
        "threshold": THRESHOLD,
        "true_pass_rates": RATES,
        "judge": {
            "clear_flip_rate": CLEAR_FLIP,
            "borderline_flip_rate": BORDERLINE_FLIP,
            "borderline_share": BORDERLINE_SHARE,
        },
        "max_judgements_per_case": max(repeats for _, _, repeats in gates),
        "seconds": round(time.perf_counter() - started, 1),
        "results": table,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(render(document), encoding="utf-8")
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    return 0


def render(document: dict) -> str:
    names = list(next(iter(document["results"].values())))
    lines = [
        "# CI gating under a noisy judge (benchmarks/ci_gating.py)",
        "",
        f"{document['runs_per_scenario']} simulated CI runs per row, seed {document['seed']}, "
        f"threshold >= {document['threshold']}; true pass rate 0.88 (healthy) or 0.65 "
        "(regressed); judge flips a verdict with probability 0.03 (3/4 of cases) or 0.25 "
        "(1/4); at most 3 judgements per case (5 for the x5 gates). Healthy: share of runs the gate FAILS (lower "
        "is better). Regressed: share of runs the gate FAILS, i.e. catches the drop (higher is "
        "better). In brackets: judgements per case.",
        "",
        "| suite size | build | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for key, row in document["results"].items():
        size, scenario = key.split(":")
        cells = [f"{row[n]['fail_rate']:.1%} ({row[n]['judgements_per_case']:.2f})" for n in names]
        lines.append(f"| {size} | {scenario} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
