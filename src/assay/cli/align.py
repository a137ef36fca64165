"""`assay align METRIC --train labels.jsonl --test labels_test.jsonl -o aligned.json`

Aligns a judge on the training labels (few-shot examples chosen by similarity with labels taking
turns, a threshold calibrated for score judges, optionally an instruction search first), reports
held-out agreement before and after with 95% intervals, and writes the aligned state, which
`Metric.load_alignment` / `assay.alignment.load_aligned_metric` read back, with the held-out
report beside it in the same file (`assay report --alignment aligned.json` shows it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from assay.errors import UsageError

Opt = Optional  # typer reads Optional[...] annotations; 3.10 needs them spelled this way


def align_command(
    metric: Annotated[
        str,
        typer.Argument(
            help="Metric to align, e.g. faithfulness, context_recall, domain_specific_rubrics, coherence"
        ),
    ],
    train: Annotated[
        Path,
        typer.Option(
            "--train",
            help="Training labels: .jsonl, .csv, .json (rows, review export or Ragas annotations)",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the aligned state (JSON)")
    ],
    test: Annotated[
        Opt[Path],
        typer.Option("--test", help="Held-out labels; without it a test part is split off --train"),
    ] = None,
    test_size: Annotated[
        float, typer.Option("--test-size", help="Share split off --train when --test is not given")
    ] = 0.2,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the split, the fixed examples and the bootstrap")
    ] = 42,
    label_column: Annotated[
        Opt[str], typer.Option("--label-column", help="Column holding the label (default: label)")
    ] = None,
    group_column: Annotated[
        Opt[str],
        typer.Option("--group-column", help="Rows sharing a value never straddle two splits"),
    ] = None,
    metric_name: Annotated[
        Opt[str], typer.Option("--metric-name", help="Which metric of a Ragas annotation file")
    ] = None,
    criterion: Annotated[
        Opt[str], typer.Option("--criterion", help="Which criterion of a review-queue export")
    ] = None,
    label_map: Annotated[
        Opt[list[str]],
        typer.Option(
            "--map",
            help="Relabel before fitting: LABEL=VALUE, repeatable (--map good=1 --map bad=0; "
            "--map 0=1 --map 1=0 flips yes/no labels); each side is read as JSON when it can be",
        ),
    ] = None,
    llm: Annotated[
        Opt[str], typer.Option("--llm", help="Judge model, e.g. openai/gpt-4o-mini, local")
    ] = None,
    base_url: Annotated[
        Opt[str], typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
    ] = None,
    embeddings: Annotated[
        Opt[str], typer.Option("--embeddings", help="Embedding model for choosing examples")
    ] = None,
    examples: Annotated[
        str,
        typer.Option(
            "--examples",
            "-k",
            help="Few-shot examples per row (0: threshold only); several as 0,3, or auto "
            "(tries 0 and 3 on the training rows and keeps the better)",
        ),
    ] = "3",
    similarity_threshold: Annotated[
        Opt[float],
        typer.Option("--similarity-threshold", help="Leave out examples less similar than this"),
    ] = None,
    no_balance: Annotated[
        bool, typer.Option("--no-balance", help="Nearest examples whatever their labels")
    ] = False,
    no_threshold: Annotated[
        bool, typer.Option("--no-threshold", help="Do not calibrate a decision threshold")
    ] = False,
    selection: Annotated[
        str,
        typer.Option(
            "--selection", help="similar: per row; fixed: the same examples for every row"
        ),
    ] = "similar",
    optimize: Annotated[
        bool, typer.Option("--optimize", help="Search the instruction with GeneticOptimizer first")
    ] = False,
    max_calls: Annotated[
        Opt[int], typer.Option("--max-calls", help="Cap on judge calls of the instruction search")
    ] = 1000,
    report_json: Annotated[
        Opt[Path], typer.Option("--report", help="Also write the report as JSON")
    ] = None,
    report_html: Annotated[
        Opt[Path], typer.Option("--html", help="Also write the report as an HTML page")
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", help="Bootstrap resamples for the intervals")
    ] = 2000,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the response cache")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bars")] = False,
) -> None:
    """Align a judge with human labels and report held-out agreement."""
    from assay.alignment import GeneticOptimizer, InstructionConfig, load_labels
    from assay.alignment.calibration import k_candidates
    from assay.cli.console import stdout
    from assay.cli.metric_spec import parse_metric
    from assay.metrics.aligned import Alignable

    k = _k_option(examples)
    judge_metric = parse_metric(metric)
    if not isinstance(judge_metric, Alignable):
        raise UsageError(f"{judge_metric.name} is not an LLM judge; align works on judged metrics")
    read = {
        "label_column": label_column,
        "group_column": group_column,
        "metric_name": metric_name,
        "criterion": criterion,
    }
    mapping = _mapping(label_map or [])
    train_rows = load_labels(train, **read)
    test_rows = load_labels(test, **read) if test is not None else None
    judge, embedder = _models(
        llm,
        base_url,
        embeddings,
        cache=not no_cache,
        wants_embeddings=max(k_candidates(k)) > 0 and selection == "similar",
    )
    if judge is not None:
        judge_metric = judge_metric.with_models(llm=judge)
    search = None
    if optimize:  # run inside align_and_validate: after the split, on the training rows only
        optimizer = GeneticOptimizer(max_calls=max_calls, seed=seed, show_progress=not no_progress)
        search = InstructionConfig(optimizer=optimizer)
    report = judge_metric.align_and_validate(
        train_rows,
        test_rows,
        embedding_model=embedder,
        test_size=test_size,
        random_state=seed,
        max_similar_examples=k,
        similarity_threshold=similarity_threshold,
        balance=not no_balance,
        calibrate=not no_threshold,
        selection=selection,
        mapping=mapping,
        show_progress=not no_progress,
        report_options={"n_resamples": resamples, "seed": seed},
        instruction_config=search,
    )
    judge_metric.save_alignment(output)
    _attach_report(output, report)
    stdout.print(report.table())
    state = judge_metric.alignment
    threshold = "none" if state.threshold is None else f"{state.threshold:.4g}"
    stdout.print(
        f"aligned state written to {output} ({len(state.examples)} examples in the pool, k={state.k}, threshold {threshold})"
    )
    for note in dict.fromkeys([*state.provenance.get("notes", []), *report.notes]):
        stdout.print(f"note: {note}", highlight=False, soft_wrap=True)
    if report_json is not None:
        report.to_json(report_json)
    if report_html is not None:
        report.to_html(report_html)


def _k_option(text: str) -> Any:
    """--examples: a whole number, several separated by commas, or auto."""
    from assay.alignment.calibration import k_candidates

    cleaned = text.strip().lower()
    if cleaned == "auto":
        return "auto"
    try:
        values = [int(part) for part in cleaned.split(",")]
    except ValueError:
        raise UsageError(
            f"--examples takes a whole number >= 0, several as 0,3, or auto; got {text!r}"
        ) from None
    k_candidates(values)  # the same check align() makes, before any model is loaded
    return values[0] if len(values) == 1 else values


def _mapping(pairs: list[str]) -> dict[Any, Any]:
    """`--map LABEL=VALUE` options as a dict; `1`, `0.5`, `true` and `"x"` are read as JSON."""

    def value(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return text

    found: dict[Any, Any] = {}
    for pair in pairs:
        label, sep, target = pair.partition("=")
        if not sep or not label.strip():
            raise UsageError(f"--map takes LABEL=VALUE (e.g. --map good=1), got {pair!r}")
        key = value(label.strip())
        if isinstance(key, (list, dict)):
            raise UsageError(f"--map: a label to map is a single value, got {label!r}")
        found[key] = value(target.strip())
    return found


def _attach_report(path: Path, report: Any) -> None:
    """The held-out report goes into the aligned file too (under "report"), so `assay report
    --alignment aligned.json` shows how the state was validated; loading the state ignores it.
    Written beside the file and moved into place: never a half-written file under its name."""
    payload = json.loads(path.read_text("utf-8"))
    payload["report"] = report.to_dict()
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(
            json.dumps(payload, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
        )
        partial.replace(path)
    except OSError as exc:
        raise UsageError(f"cannot write the report into {path}: {exc}") from exc


def _models(
    llm: str | None,
    base_url: str | None,
    embeddings: str | None,
    *,
    cache: bool,
    wants_embeddings: bool,
) -> tuple[Any, Any]:
    from assay.models import defaults, factory

    judge = factory.llm_factory(llm, base_url=base_url, cache=cache) if llm is not None else None
    if embeddings is not None:
        embedder = factory.embedding_factory(embeddings, base_url=base_url, cache=cache)
    elif wants_embeddings:
        embedder = defaults.default_embeddings(cache=cache)
    else:
        embedder = None
    return judge, embedder


__all__ = ["align_command"]
