"""`assay benchmark SUITE --metric M`: a metric's agreement with human labels; `assay benchmark report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

Opt = Optional  # typer reads Optional[...] annotations; 3.10 needs them spelled this way

SUITE_HELP = (
    "wikieval, ares, begin, halueval-qa, ragchecker, ragchecker-relevance or bfcl; "
    "or `report` to merge all results"
)


def benchmark_command(
    suite: Annotated[str, typer.Argument(help=SUITE_HELP, show_default=False)],
    metric: Annotated[
        Opt[str],
        typer.Option(
            "--metric", "-m", help="Metric id, e.g. faithfulness or faithfulness(scoring=binary)"
        ),
    ] = None,
    data_dir: Annotated[
        Opt[Path],
        typer.Option("--data-dir", help="Folder of the data sets (default: $ASSAY_METAEVAL_DIR)"),
    ] = None,
    llm: Annotated[
        Opt[str],
        typer.Option(
            "--llm",
            help="Judge model, e.g. local, openai/gpt-4o-mini (default: $ASSAY_LLM, else local)",
        ),
    ] = None,
    base_url: Annotated[
        Opt[str], typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
    ] = None,
    embeddings: Annotated[
        Opt[str], typer.Option("--embeddings", help="Embedding model (answer_relevancy)")
    ] = None,
    limit: Annotated[
        Opt[int],
        typer.Option(
            "--limit",
            help="First N pairs/instances/cases; a stratified sample of N for binary suites",
        ),
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            "--split",
            help=(
                "dev or test (dev: begin, halueval-qa, ragchecker and ragchecker-relevance; "
                "ragchecker also has all)"
            ),
        ),
    ] = "test",
    aspect: Annotated[
        Opt[str],
        typer.Option(
            "--aspect", help="Which human label to compare with, when the suite has several"
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the stratified sample and the bootstrap")
    ] = 0,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Score at or above which a binary item counts as positive"
        ),
    ] = 0.5,
    threshold_from: Annotated[
        Opt[Path],
        typer.Option(
            "--threshold-from",
            help="Use the threshold tuned in this dev-split result (JSON) instead of --threshold",
        ),
    ] = None,
    output_dir: Annotated[
        Path, typer.Option("--output-dir", help="Where the JSON and markdown results go")
    ] = Path("benchmarks/results"),
    runs_dir: Annotated[
        Path, typer.Option("--runs-dir", help="Run directories (checkpoints; rerun to resume)")
    ] = Path("benchmarks/runs"),
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the response cache")
    ] = False,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Cells scored at once")] = 8,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")] = 600.0,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show a progress bar")
    ] = True,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="Who scores: assay, or ragas (its counterpart metric, same judge, same items)",
        ),
    ] = "assay",
    ragas_python: Annotated[
        Opt[Path],
        typer.Option(
            "--ragas-python",
            help="Python of a virtualenv with Ragas (default: $ASSAY_RAGAS_PYTHON)",
        ),
    ] = None,
    aligned: Annotated[
        Opt[Path],
        typer.Option(
            "--aligned",
            help="Score with the aligned state `assay align` wrote (examples, threshold); "
            "it names its metric, so --metric may be left out",
        ),
    ] = None,
    prompts_dir: Annotated[
        Opt[Path],
        typer.Option(
            "--prompts-dir",
            help="Folder of prompt variants (<prompt id>.<language>.yaml) that replace the "
            "metric's shipped wording for this run; try wording on a dev split only",
        ),
    ] = None,
) -> None:
    """Measure a metric's agreement with human labels on SUITE, or merge results with `report`."""
    from assay.benchmark.report import (
        engine_label,
        figure_text,
        merge_results,
        tuned_threshold,
        write_record,
    )
    from assay.benchmark.runner import run_benchmark
    from assay.cli.console import stdout
    from assay.errors import UsageError

    if suite == "report":
        path, count = merge_results(output_dir)
        stdout.print(f"merged {count} result(s) into {path}", highlight=False, soft_wrap=True)
        return
    if not metric and aligned is None:
        raise UsageError(
            "--metric is required (or --aligned FILE, which names its metric), e.g. "
            "assay benchmark wikieval --metric faithfulness"
        )
    from assay.cli.metric_spec import parse_metric
    from assay.models.factory import embedding_factory, llm_factory

    threshold_source = str(threshold_from) if threshold_from is not None else None
    if threshold_from is not None and engine == "ragas":
        threshold = tuned_threshold(threshold_from, suite=suite, split=split)
    if engine not in ("assay", "ragas"):
        raise UsageError(f"--engine must be assay or ragas, got {engine!r}")
    if aligned is not None and engine == "ragas":
        raise UsageError("--aligned applies to assay's metrics, not to --engine ragas")
    if prompts_dir is not None and engine == "ragas":
        raise UsageError("--prompts-dir applies to assay's metrics, not to --engine ragas")
    common = dict(
        data_dir=data_dir,
        aspect=aspect,
        split=split,
        limit=limit,
        seed=seed,
        threshold=threshold,
        runs_dir=runs_dir,
        max_concurrency=concurrency,
        timeout=timeout,
        show_progress=progress,
        cache=not no_cache,
    )
    if engine == "ragas":
        from assay.benchmark.ragas_side import run_ragas_benchmark
        from assay.cli.metric_spec import split_metric_spec

        name, options = split_metric_spec(metric)
        judge = llm_factory(llm, base_url=base_url, cache=not no_cache) if llm else None
        embedder = (
            embedding_factory(embeddings, base_url=base_url, cache=not no_cache)
            if embeddings
            else None
        )
        record = run_ragas_benchmark(
            suite,
            name,
            python=ragas_python,
            options=options,
            llm=judge,
            embeddings=embedder,
            **common,
        )
    else:
        if metric:
            chosen = parse_metric(metric)
        else:  # the aligned file describes its metric: rebuild it, alignment attached below
            from assay.alignment import load_aligned_metric

            chosen = load_aligned_metric(aligned).clear_alignment()
        if prompts_dir is not None:
            from assay.benchmark.variants import with_prompt_variants

            chosen = with_prompt_variants(chosen, prompts_dir)
        if threshold_from is not None:  # checked against the metric, before any call
            common["threshold"] = tuned_threshold(
                threshold_from, suite=suite, split=split, spec=chosen.spec()
            )
        judge = (
            llm_factory(llm, base_url=base_url, cache=not no_cache)
            if llm and chosen.needs_llm
            else None
        )
        embedder = (
            embedding_factory(embeddings, base_url=base_url, cache=not no_cache)
            if embeddings and chosen.needs_embeddings
            else None
        )
        if aligned is not None:
            load_alignment = getattr(chosen, "load_alignment", None)
            if load_alignment is None:
                raise UsageError(f"--aligned: {chosen.name} asks no judge, so it cannot be aligned")
            # Examples chosen by similarity need embeddings even for a metric that has none.
            pick_with = embedder or (
                embedding_factory(embeddings, base_url=base_url, cache=not no_cache)
                if embeddings
                else None
            )
            load_alignment(aligned, embedding_model=pick_with)
        record = run_benchmark(suite, chosen, llm=judge, embeddings=embedder, **common)
        if aligned is not None:
            record["aligned_from"] = str(aligned)
            record["metric"]["alignment"] = chosen.alignment.fingerprint()
        if prompts_dir is not None:
            record["prompts_dir"] = str(prompts_dir)
    if threshold_source is not None:
        record["threshold_source"] = threshold_source
    json_path, md_path = write_record(record, output_dir)
    cells = record["cells"]
    stdout.print(
        f"{record['suite']} / {record['aspect']} / {engine_label(record)} {record['metric']['name']} "
        f"({record['split']}): "
        f"{record['n_scored']} of {record['n_units']} scored; cells: {cells['ok']} ok, "
        f"{cells['skipped']} skipped, {cells['error']} error",
        highlight=False,
        soft_wrap=True,
    )
    for figure in record["figures"]:
        if figure.get("headline"):
            stdout.print(
                f"  {figure['label']}: {figure_text(figure)}", highlight=False, soft_wrap=True
            )
    stdout.print(f"written {json_path} and {md_path}", highlight=False, soft_wrap=True)
