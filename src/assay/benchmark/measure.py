"""`measure`: one metric's agreement with human labels on one suite, as `assay benchmark` runs it.

`runner.run_benchmark` (assay's metrics) and `ragas_side.run_ragas_benchmark` (Ragas' counterpart in
its own virtualenv) score a suite and return its record. Around them sits what a benchmark run
decides: which engine scores, the metric (given, or rebuilt from an aligned file), a saved aligned
state or prompt variants to score with, a threshold tuned on a dev split and carried to test, the
judge and embeddings (`ModelChoice`), and where the JSON and markdown results go. That is here, so a
script measures exactly what the command line does; `assay.cli.benchmark` only parses and prints.

Error messages name the options as the command line spells them (`--aligned`, `--threshold-from`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.engine.model_choice import ModelChoice
from assay.errors import UsageError
from assay.metrics.aligned import Alignable
from assay.metrics.base import Metric

ENGINES = ("assay", "ragas")
METRIC_REQUIRED = (
    "--metric is required (or --aligned FILE, which names its metric), e.g. "
    "assay benchmark wikieval --metric faithfulness"
)
PATHS = ("threshold_from", "output_dir", "runs_dir", "ragas_python", "aligned", "prompts_dir")


@dataclass(frozen=True)
class BenchmarkOptions:
    """How `measure` runs a suite; the engine and the options that depend on it are checked when
    the options are made.

    data_dir: the folder of the data sets (default: $ASSAY_METAEVAL_DIR).
    models: the judge and embeddings (`ModelChoice`); unnamed ones default where needed.
    limit: the first N pairs / instances / cases, a stratified sample of N for binary suites.
    split: "test" or "dev" (some suites have "all"). aspect: which human label, when several.
    seed: of the stratified sample and the bootstrap. threshold: the score at or above which a
        binary item counts as positive; threshold_from: a dev-split result (JSON) whose tuned
        threshold is used instead (checked against the metric before any call).
    output_dir: where the JSON and markdown results go (None: not written). runs_dir: the run
        directories (checkpoints: run again to resume).
    concurrency: rows scored at once (fewer for the embedded judge); timeout: seconds per row.
    engine: "assay", or "ragas" (Ragas' counterpart metric, same judge, same items), run with
        the Python of `ragas_python` (default: $ASSAY_RAGAS_PYTHON) and `ragas_options` given to
        the Ragas metric.
    aligned: score with the aligned state `assay align` wrote (it names its metric).
    prompts_dir: prompt variants (<prompt id>.<language>.yaml) that replace the shipped wording.
    """

    data_dir: str | Path | None = None
    models: ModelChoice = field(default_factory=ModelChoice)
    limit: int | None = None
    split: str = "test"
    aspect: str | None = None
    seed: int = 0
    threshold: float = 0.5
    threshold_from: str | Path | None = None
    output_dir: str | Path | None = Path("benchmarks") / "results"
    runs_dir: str | Path = Path("benchmarks") / "runs"
    concurrency: int = 8
    timeout: float = 600.0
    show_progress: bool = True
    engine: str = "assay"
    ragas_python: str | Path | None = None
    ragas_options: Mapping[str, Any] | None = None
    aligned: str | Path | None = None
    prompts_dir: str | Path | None = None

    def __post_init__(self) -> None:
        for name in PATHS:  # a path may be given as a string
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))
        if self.engine not in ENGINES:
            raise UsageError(f"--engine must be assay or ragas, got {self.engine!r}")
        if self.aligned is not None and self.engine == "ragas":
            raise UsageError("--aligned applies to assay's metrics, not to --engine ragas")
        if self.prompts_dir is not None and self.engine == "ragas":
            raise UsageError("--prompts-dir applies to assay's metrics, not to --engine ragas")

    def common(self) -> dict[str, Any]:
        """The settings both engines' runners take."""
        return {
            "data_dir": self.data_dir,
            "aspect": self.aspect,
            "split": self.split,
            "limit": self.limit,
            "seed": self.seed,
            "threshold": self.threshold,
            "runs_dir": self.runs_dir,
            "max_concurrency": self.concurrency,
            "timeout": self.timeout,
            "show_progress": self.show_progress,
            "cache": self.models.cache,
        }


@dataclass
class BenchmarkRun:
    """What `measure` produced: the run's record (the JSON `report.write_record` writes: suite,
    metric, judge, cells, figures with intervals, cost) and the files written, if any."""

    record: dict[str, Any]
    json_path: Path | None = None
    markdown_path: Path | None = None

    @property
    def figures(self) -> dict[str, dict[str, Any]]:
        """The figures by name, e.g. `run.figures["pairwise_accuracy"]["value"]`."""
        return {figure["name"]: figure for figure in self.record["figures"]}

    @property
    def headline(self) -> list[dict[str, Any]]:
        """The figures the suite leads with (what `assay benchmark` prints)."""
        return [figure for figure in self.record["figures"] if figure.get("headline")]


def measure(
    suite: str, metric: Metric | str | None = None, options: BenchmarkOptions | None = None
) -> BenchmarkRun:
    """Score `suite` with `metric` (an object or an id; None with `options.aligned`, whose file
    names the metric), compute its agreement with the human labels, and write the results to
    `options.output_dir` unless it is None."""
    from assay.benchmark.report import write_record

    options = options or BenchmarkOptions()
    if metric is None and options.aligned is None:
        raise UsageError(METRIC_REQUIRED)
    if options.engine == "ragas":
        record = _with_ragas(suite, _metric_id(metric), options)
    else:
        record = _with_assay(suite, metric, options)
    if options.threshold_from is not None:
        record["threshold_source"] = str(options.threshold_from)
    if options.output_dir is None:
        return BenchmarkRun(record)
    json_path, markdown_path = write_record(record, options.output_dir)
    return BenchmarkRun(record, json_path, markdown_path)


def _metric_id(metric: Metric | str | None) -> str:
    if isinstance(metric, Metric):
        from assay.metrics.registry import default_name

        return default_name(type(metric))
    return str(metric)


def _with_ragas(suite: str, metric_id: str, options: BenchmarkOptions) -> dict[str, Any]:
    from assay.benchmark.ragas_side import run_ragas_benchmark
    from assay.benchmark.report import tuned_threshold

    common = options.common()
    if options.threshold_from is not None:
        common["threshold"] = tuned_threshold(
            options.threshold_from, suite=suite, split=options.split
        )
    return run_ragas_benchmark(
        suite,
        metric_id,
        python=options.ragas_python,
        options=dict(options.ragas_options or {}),
        llm=options.models.named_llm(),
        embeddings=options.models.named_embeddings(),
        **common,
    )


def _with_assay(
    suite: str, metric: Metric | str | None, options: BenchmarkOptions
) -> dict[str, Any]:
    from assay.benchmark.report import tuned_threshold
    from assay.benchmark.runner import run_benchmark

    chosen = _assay_metric(metric, options)
    common = options.common()
    if options.threshold_from is not None:  # checked against the metric, before any call
        common["threshold"] = tuned_threshold(
            options.threshold_from, suite=suite, split=options.split, spec=chosen.spec()
        )
    models = options.models
    judge = models.named_llm() if chosen.needs_llm else None
    embedder = models.named_embeddings() if chosen.needs_embeddings else None
    state = None
    if options.aligned is not None:
        if not isinstance(chosen, Alignable):
            raise UsageError(f"--aligned: {chosen.name} asks no judge, so it cannot be aligned")
        # Examples chosen by similarity need embeddings even for a metric that has none.
        chosen.load_alignment(
            options.aligned, embedding_model=embedder or models.named_embeddings()
        )
        state = chosen.alignment
    record = run_benchmark(suite, chosen, llm=judge, embeddings=embedder, **common)
    if state is not None:
        record["aligned_from"] = str(options.aligned)
        record["metric"]["alignment"] = state.fingerprint()
    if options.prompts_dir is not None:
        record["prompts_dir"] = str(options.prompts_dir)
    return record


def _assay_metric(metric: Metric | str | None, options: BenchmarkOptions) -> Metric:
    """The metric to score with: the one given (an id is created), or the one the aligned file
    describes (its alignment attached later, checked against the metric's prompts); with
    prompt variants in place of its shipped wording."""
    if isinstance(metric, str):
        from assay.metrics.registry import create_metric

        chosen = create_metric(metric)
    elif metric is not None:
        chosen = metric
    elif options.aligned is not None:
        from assay.alignment import load_aligned_metric

        chosen = load_aligned_metric(options.aligned).clear_alignment()
    else:
        raise UsageError(METRIC_REQUIRED)
    if options.prompts_dir is not None:
        from assay.benchmark.variants import with_prompt_variants

        chosen = with_prompt_variants(chosen, options.prompts_dir)
    return chosen


__all__ = ["BenchmarkOptions", "BenchmarkRun", "measure"]
