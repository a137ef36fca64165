"""Alignment benchmark (issue #20): does `align()` make the judge agree more with people, on
held-out data, and more than Ragas' way of aligning?

    python benchmarks/alignment.py --data-dir ../shared/data/metaeval            # embedded judge
    python benchmarks/alignment.py --llm openai/gpt-4o-mini --embeddings openai/text-embedding-3-small

1. BEGIN (WoW), faithfulness: align on the whole dev split (groups: the knowledge passage, so no
   passage is shown as an example to a row that shares it); test on a fixed, seeded sample of the
   test split with as many faithful as unfaithful rows (`--test-per-label`, default 300).
   - unaligned (read at 0.5) vs `align()` (k balanced similar examples + threshold fitted on dev);
   - `align()` vs a faithful Ragas-style align (top-k cosine >= 0.7, else the most recent rows; no
     balancing, no threshold), on the same rows: paired differences with bootstrap 95% intervals.
2. Over-fitting guard: WikiEval's 50 faithfulness pairs, pairwise accuracy aligned vs unaligned.

Every judge answer goes through assay's response cache, so a rerun of a finished benchmark makes
no judge call (the JSON records the calls made). Results:
`benchmarks/results/alignment_begin__<selection>.json` and `.md`.

Cost on the embedded judge (2 cores): a row without examples reads ~150 new prompt tokens (the
instruction is kept in the llama.cpp slot), ~1.6 s per row. Examples chosen per row by similarity
make every prompt new, ~1,000 tokens, ~11 s per row: the defaults (430 calibration rows, 600 test
rows, the Ragas-style comparison) then take about three hours. `--selection fixed` shows every
row the same balanced examples, which the slot keeps, so aligned rows cost about what unaligned
ones do; `--ragas-per-label` compares with the Ragas-style align on a smaller balanced sample.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from assay.alignment import Aligner, LabeledExample, LabeledSet
from assay.benchmark.loaders import load_begin, load_wikieval
from assay.benchmark.suites import resolve_data_dir
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import defaults, factory
from assay.models.usage import UsageMeter, metering

RESULTS = Path(__file__).parent / "results"


def labelled(data: Any, split: str) -> LabeledSet:
    """Suite rows as labelled rows; a row's group is its knowledge passage."""
    return LabeledSet(
        [
            LabeledExample(id=row_id, fields=row, label=label, group=row["retrieved_contexts"][0])
            for row_id, row, label in zip(data.ids, data.rows, data.labels, strict=True)
        ],
        f"begin {split}",
    )


def balanced_sample(rows: LabeledSet, per_label: int, seed: int) -> LabeledSet:
    """A fixed, seeded sample with `per_label` rows of each label."""
    rng = random.Random(seed)
    chosen: list[LabeledExample] = []
    for label in (1, 0):
        members = [e for e in rows if e.label == label]
        if len(members) < per_label:
            sys.exit(f"the test split has only {len(members)} rows labelled {label}")
        chosen.extend(rng.sample(members, per_label))
    chosen.sort(key=lambda e: e.id)
    return LabeledSet(chosen, f"{rows.source}, {per_label} per label (seed {seed})")


def estimate(report: Any, block: str, name: str) -> dict[str, Any] | None:
    values = getattr(report, block)
    return None if values is None or name not in values else values[name].to_dict()


def pairwise_accuracy(metric: Any, root: Path, concurrency: int = 2) -> dict[str, Any]:
    """Share of WikiEval pairs where the preferred answer scores higher (a tie counts one half).
    Rows are scored `concurrency` at a time (a long WikiEval row is ~17 s on a CPU judge)."""
    import anyio

    from assay._util.sync import run_sync

    data = load_wikieval(root, "faithfulness")
    scores: list[Any] = [None] * len(data.rows)

    async def score_all() -> None:
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(index: int) -> None:
            async with limiter:
                scores[index] = (await metric.ascore(**data.rows[index])).value

        async with anyio.create_task_group() as group:
            for index in range(len(data.rows)):
                group.start_soon(one, index)

    run_sync(score_all())
    wins = sum(
        1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0
        for a, b in data.pairs
    )
    return {"pairs": len(data.pairs), "accuracy": wins / len(data.pairs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="meta-evaluation data (default $ASSAY_METAEVAL_DIR)",
    )
    parser.add_argument(
        "--llm", default=None, help="judge (default $ASSAY_LLM, else the embedded judge)"
    )
    parser.add_argument("--base-url", default=None)
    parser.add_argument(
        "--embeddings", default=None, help="embedding model (default the offline MiniLM)"
    )
    parser.add_argument("--test-per-label", type=int, default=300)
    parser.add_argument(
        "--examples",
        default="3",
        help="examples per row for align(): a number, or auto (0 or 3, chosen on dev)",
    )
    parser.add_argument(
        "--ragas-examples", type=int, default=3, help="examples per row of the Ragas-style align"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--selection",
        choices=("similar", "fixed"),
        default="similar",
        help="how align() picks examples: per row by similarity, or the same balanced ones for "
        "every row (a llama.cpp judge then reads the examples once per slot, not once per row)",
    )
    parser.add_argument(
        "--ragas-per-label",
        type=int,
        default=None,
        help="compare with Ragas-style align on this many test rows per label (default: all); "
        "its examples differ per row, so on a CPU judge each row costs a full prompt",
    )
    parser.add_argument(
        "--skip-wikieval", action="store_true", help="leave out the WikiEval over-fitting guard"
    )
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    examples: Any = "auto" if args.examples == "auto" else int(args.examples)

    root = resolve_data_dir(args.data_dir)
    judge = (
        factory.llm_factory(args.llm, base_url=args.base_url)
        if args.llm
        else defaults.default_llm()
    )
    embedder = (
        factory.embedding_factory(args.embeddings, base_url=args.base_url)
        if args.embeddings
        else defaults.default_embeddings()
    )
    dev = labelled(load_begin(root, split="dev"), "dev")
    # A test row whose passage is also in dev could be shown that passage's examples: held out
    # means no shared passage, so those rows are left out before sampling.
    passages = {e.group_key for e in dev}
    pool = labelled(load_begin(root, split="test"), "test")
    unseen = LabeledSet(
        [e for e in pool if e.group_key not in passages],
        f"begin test without the {sum(e.group_key in passages for e in pool)} rows on dev passages",
    )
    test = balanced_sample(unseen, args.test_per_label, args.seed)

    ragas_test = (
        test
        if args.ragas_per_label is None
        else balanced_sample(test, args.ragas_per_label, args.seed)
    )

    aligner = Aligner()
    meter = UsageMeter()
    started = time.monotonic()

    def phase(name: str) -> None:
        print(
            f"[{time.monotonic() - started:7.0f} s, {meter.usage.requests} calls] {name}",
            flush=True,
        )

    with metering(meter):
        unaligned = Faithfulness(llm=judge)
        ours = Faithfulness(llm=judge)
        phase(f"fitting align() on {len(dev)} dev rows ({args.selection} examples)")
        ours.set_alignment(
            aligner.fit(
                ours,
                dev,
                embeddings=embedder,
                k=examples,
                selection=args.selection,
                seed=args.seed,
            )
        )
        phase("fitting the Ragas-style align")
        ragas_way = Faithfulness(llm=judge)
        ragas_way.set_alignment(
            aligner.fit(
                ragas_way,
                dev,
                embeddings=embedder,
                k=args.ragas_examples,
                balance=False,
                similarity_threshold=0.7,
                fallback="recent",
                calibrate=False,
            )
        )
        options = {"n_resamples": args.resamples, "seed": args.seed}
        phase(f"aligned vs unaligned on {len(test)} test rows")
        vs_unaligned = aligner.validate(ours, test, baseline=unaligned, **options)
        phase(f"aligned vs Ragas-style align on {len(ragas_test)} test rows")
        vs_ragas = aligner.validate(ours, ragas_test, baseline=ragas_way, **options)
        wikieval = None
        state = ours.alignment
        if (
            not args.skip_wikieval
            and (state.k == 0 or not state.examples)
            and not state.instructions
        ):
            # No example and no instruction: the aligned metric sends the very prompts the
            # unaligned one sends, and a threshold changes decisions, never scores.
            wikieval = {"unchanged_by_construction": True}
        elif not args.skip_wikieval:
            phase("WikiEval pairs, unaligned and aligned")
            wikieval = {
                "unaligned": pairwise_accuracy(unaligned, root),
                "aligned": pairwise_accuracy(ours, root),
            }
        phase("done")
    seconds = time.monotonic() - started
    record = {
        "benchmark": "alignment/begin-faithfulness",
        "judge": repr(judge),
        "embeddings": repr(embedder),
        "train": {"rows": len(dev), "labels": dev.label_counts()},
        "test": {"rows": len(test), "source": test.source},
        "threshold": ours.alignment.threshold,
        "examples_per_row": ours.alignment.k,
        "examples_asked": args.examples,
        "k_candidates": ours.alignment.provenance.get("k_candidates"),
        "ragas_examples_per_row": args.ragas_examples,
        "selection": args.selection,
        "ragas_test": {"rows": len(ragas_test), "source": ragas_test.source},
        "prompts": {prompt.id: prompt.describe() for prompt in unaligned.get_prompts().values()},
        "alignment_provenance": ours.alignment.provenance,
        "aligned_vs_unaligned": {
            name: {
                "unaligned": estimate(vs_unaligned, "before", name),
                "aligned": estimate(vs_unaligned, "statistics", name),
                "difference": estimate(vs_unaligned, "differences", name),
            }
            for name in ("balanced_accuracy", "roc_auc", "kappa", "agreement")
        },
        "aligned_vs_ragas_align": {
            name: {
                "ragas_align": estimate(vs_ragas, "before", name),
                "aligned": estimate(vs_ragas, "statistics", name),
                "difference": estimate(vs_ragas, "differences", name),
            }
            for name in ("balanced_accuracy", "roc_auc")
        },
        "wikieval_pairwise": wikieval,
        "judge_calls": meter.usage.requests,
        "cached_answers": meter.usage.cached_requests,
        "seconds": round(seconds, 1),
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    stem = f"alignment_begin__{args.selection}" + (
        "" if args.examples == "3" else f"__k{args.examples}"
    )
    (args.output_dir / f"{stem}.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    (args.output_dir / f"{stem}.md").write_text(markdown(record))
    # the held-out report itself, for `assay report --alignment`
    vs_unaligned.to_json(args.output_dir / f"{stem}.report.json")
    print(markdown(record))
    return 0


def _fmt(item: dict[str, Any] | None, signed: bool = False) -> str:
    if not item or item["value"] is None:
        return "n/a"
    f = "{:+.3f}" if signed else "{:.3f}"
    if item["low"] is None:
        return f.format(item["value"])
    return f"{f.format(item['value'])} [{f.format(item['low'])}, {f.format(item['high'])}]"


def markdown(record: dict[str, Any]) -> str:
    lines = [
        "# Alignment: BEGIN faithfulness, held out",
        "",
        f"Judge {record['judge']}; aligned on {record['train']['rows']} dev rows; tested on "
        f"{record['test']['rows']} rows ({record['test']['source']}). Threshold fitted on dev: "
        f"{record['threshold']}. Examples: {record['examples_per_row']} per row, "
        f"{record['selection']} selection"
        + (
            " (k chosen on dev: "
            + "; ".join(
                f"k={k}: balanced accuracy {c['train_value']:.3f}, ROC-AUC {c['train_roc_auc']:.3f}"
                for k, c in record["k_candidates"].items()
            )
            + ")"
            if record.get("k_candidates")
            else ""
        )
        + ". 95% paired bootstrap intervals.",
        "",
        "| statistic | unaligned | aligned | difference |",
        "|---|---|---|---|",
    ]
    for name, row in record["aligned_vs_unaligned"].items():
        lines.append(
            f"| {name} | {_fmt(row['unaligned'])} | {_fmt(row['aligned'])} | {_fmt(row['difference'], True)} |"
        )
    lines += [
        "",
        f"Against a Ragas-style align ({record.get('ragas_examples_per_row', 3)} examples, top-k cosine >= 0.7, else the most recent rows; no "
        f"balancing, no threshold) on {record['ragas_test']['rows']} rows ({record['ragas_test']['source']}):",
        "",
        "| statistic | Ragas-style align | aligned | difference |",
        "|---|---|---|---|",
    ]
    for name, row in record["aligned_vs_ragas_align"].items():
        lines.append(
            f"| {name} | {_fmt(row['ragas_align'])} | {_fmt(row['aligned'])} | {_fmt(row['difference'], True)} |"
        )
    wiki = record["wikieval_pairwise"]
    if wiki and wiki.get("unchanged_by_construction"):
        guard = (
            "WikiEval over-fitting guard: no loss by construction. align() kept no example and "
            "no instruction, so the aligned metric sends the unaligned metric's prompts and every "
            "score is the same (the threshold changes decisions, not scores); pairwise accuracy "
            "cannot move."
        )
    elif wiki:
        guard = (
            f"WikiEval pairwise accuracy ({wiki['aligned']['pairs']} pairs): unaligned "
            f"{wiki['unaligned']['accuracy']:.3f}, aligned {wiki['aligned']['accuracy']:.3f}."
        )
    else:
        guard = "WikiEval over-fitting guard: not run (--skip-wikieval)."
    lines += [
        "",
        guard,
        "",
        f"{record['judge_calls']} judge calls, {record['cached_answers']} answered from the cache, {record['seconds']} s.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
