"""`assay benchmark SUITE --metric M`: a metric's agreement with human labels; `assay benchmark report`.

The command parses its options, calls `assay.benchmark.measure` (engine, metric, aligned state,
prompt variants, tuned threshold, models, results written) or `merge_results`, and prints. The
options are declared once, as the `Annotated` aliases below, so the command reads as a list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

SUITE_HELP = (
    "wikieval, ares, begin, halueval-qa, ragchecker, ragchecker-relevance or bfcl; "
    "or `report` to merge all results"
)

Suite = Annotated[str, typer.Argument(help=SUITE_HELP, show_default=False)]
MetricSpec = Annotated[
    str | None,
    typer.Option(
        "--metric", "-m", help="Metric id, e.g. faithfulness or faithfulness(scoring=binary)"
    ),
]
DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Folder of the data sets (default: $ASSAY_METAEVAL_DIR)"),
]
Llm = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="Judge model, e.g. local, openai/gpt-4o-mini (default: $ASSAY_LLM, else local)",
    ),
]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
]
Embeddings = Annotated[
    str | None, typer.Option("--embeddings", help="Embedding model (answer_relevancy)")
]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit", help="First N pairs/instances/cases; a stratified sample of N for binary suites"
    ),
]
Split = Annotated[
    str,
    typer.Option(
        "--split",
        help=(
            "dev or test (dev: begin, halueval-qa, ragchecker and ragchecker-relevance; "
            "ragchecker also has all)"
        ),
    ),
]
Aspect = Annotated[
    str | None,
    typer.Option("--aspect", help="Which human label to compare with, when the suite has several"),
]
Seed = Annotated[
    int, typer.Option("--seed", help="Seed of the stratified sample and the bootstrap")
]
Threshold = Annotated[
    float,
    typer.Option("--threshold", help="Score at or above which a binary item counts as positive"),
]
ThresholdFrom = Annotated[
    Path | None,
    typer.Option(
        "--threshold-from",
        help="Use the threshold tuned in this dev-split result (JSON) instead of --threshold",
    ),
]
OutputDir = Annotated[
    Path, typer.Option("--output-dir", help="Where the JSON and markdown results go")
]
RunsDir = Annotated[
    Path, typer.Option("--runs-dir", help="Run directories (checkpoints; rerun to resume)")
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the response cache")
]
Concurrency = Annotated[int, typer.Option("--concurrency", help="Cells scored at once")]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar")]
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Who scores: assay, or ragas (its counterpart metric, same judge, same items)",
    ),
]
RagasPython = Annotated[
    Path | None,
    typer.Option(
        "--ragas-python", help="Python of a virtualenv with Ragas (default: $ASSAY_RAGAS_PYTHON)"
    ),
]
Aligned = Annotated[
    Path | None,
    typer.Option(
        "--aligned",
        help="Score with the aligned state `assay align` wrote (examples, threshold); "
        "it names its metric, so --metric may be left out",
    ),
]
PromptsDir = Annotated[
    Path | None,
    typer.Option(
        "--prompts-dir",
        help="Folder of prompt variants (<prompt id>.<language>.yaml) that replace the "
        "metric's shipped wording for this run; try wording on a dev split only",
    ),
]


def benchmark_command(
    suite: Suite,
    metric: MetricSpec = None,
    data_dir: DataDir = None,
    llm: Llm = None,
    base_url: BaseUrl = None,
    embeddings: Embeddings = None,
    limit: Limit = None,
    split: Split = "test",
    aspect: Aspect = None,
    seed: Seed = 0,
    threshold: Threshold = 0.5,
    threshold_from: ThresholdFrom = None,
    output_dir: OutputDir = Path("benchmarks/results"),
    runs_dir: RunsDir = Path("benchmarks/runs"),
    no_cache: NoCache = False,
    concurrency: Concurrency = 8,
    timeout: Timeout = 600.0,
    progress: Progress = True,
    engine: Engine = "assay",
    ragas_python: RagasPython = None,
    aligned: Aligned = None,
    prompts_dir: PromptsDir = None,
) -> None:
    """Measure a metric's agreement with human labels on SUITE, or merge results with `report`."""
    from assay.benchmark.measure import BenchmarkOptions, measure
    from assay.benchmark.report import merge_results
    from assay.cli.console import stdout
    from assay.engine.model_choice import ModelChoice

    if suite == "report":
        path, count = merge_results(output_dir)
        stdout.print(f"merged {count} result(s) into {path}", highlight=False, soft_wrap=True)
        return
    chosen, ragas_options = _metric(metric, engine)
    options = BenchmarkOptions(
        data_dir=data_dir,
        models=ModelChoice(llm=llm, embeddings=embeddings, base_url=base_url, cache=not no_cache),
        limit=limit,
        split=split,
        aspect=aspect,
        seed=seed,
        threshold=threshold,
        threshold_from=threshold_from,
        output_dir=output_dir,
        runs_dir=runs_dir,
        concurrency=concurrency,
        timeout=timeout,
        show_progress=progress,
        engine=engine,
        ragas_python=ragas_python,
        ragas_options=ragas_options,
        aligned=aligned,
        prompts_dir=prompts_dir,
    )
    _print_run(measure(suite, chosen, options))


def _metric(spec: str | None, engine: str) -> tuple[Any, dict[str, Any]]:
    """--metric as `measure` takes it: for assay's engine the metric the spec names, for Ragas'
    the metric id with the spec's parameters as the Ragas metric's options."""
    from assay.cli.metric_spec import parse_metric, split_metric_spec

    if spec is None:
        return None, {}
    if engine == "ragas":
        return split_metric_spec(spec)
    return parse_metric(spec), {}


def _print_run(run: Any) -> None:
    from assay.benchmark.report import engine_label, figure_text
    from assay.cli.console import stdout

    record, cells = run.record, run.record["cells"]
    stdout.print(
        f"{record['suite']} / {record['aspect']} / {engine_label(record)} {record['metric']['name']} "
        f"({record['split']}): "
        f"{record['n_scored']} of {record['n_units']} scored; cells: {cells['ok']} ok, "
        f"{cells['skipped']} skipped, {cells['error']} error",
        highlight=False,
        soft_wrap=True,
    )
    for figure in run.headline:
        stdout.print(f"  {figure['label']}: {figure_text(figure)}", highlight=False, soft_wrap=True)
    stdout.print(
        f"written {run.json_path} and {run.markdown_path}", highlight=False, soft_wrap=True
    )


__all__ = ["benchmark_command"]
