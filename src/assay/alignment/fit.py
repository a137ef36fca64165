"""`align_judge`: fit a judge to human labels and report held-out agreement, as `assay align` does.

`Metric.align_and_validate` does the fitting (examples, threshold, an optional instruction search)
and returns the `AlignmentReport`. Around it sits what a whole alignment run decides: that the metric
is a judge at all, reading the label files (which column, which group, which metric of a Ragas
annotation file, which criterion of a review export), the judge and the embeddings that choose
examples (`ModelChoice`: embeddings only when examples are chosen by similarity), and writing the
aligned state with its held-out report in the same file, so `assay report --alignment` can show how
it was validated. That is here, so a script aligns exactly as the command line does;
`assay.cli.align` parses `--examples` and `--map` and prints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.engine.model_choice import ModelChoice
from assay.errors import UsageError


@dataclass(frozen=True)
class AlignOptions:
    """How `align_judge` aligns; `examples` is checked when the options are made.

    output: where the aligned state goes (JSON, with the held-out report under "report"); None:
        not written (`AlignmentRun.metric` holds the aligned metric either way).
    test_size: the share split off the training labels when no test labels are given.
    seed: of the split, the fixed examples, the optimizer and the bootstrap.
    label_column, group_column, metric_name, criterion: how label files are read (the label's
        column; rows sharing a group value never straddle two splits; which metric of a Ragas
        annotation file; which criterion of a review-queue export).
    mapping: relabel before fitting, e.g. {"good": 1, "bad": 0}.
    models: the judge (None: the metric's own or the default) and the embeddings that choose
        examples by similarity (None: the default, built only when examples are so chosen).
    examples: few-shot examples per row: a whole number (0: threshold only), several to try, or
        "auto" (0 and 3, the better kept). similarity_threshold: leave out less similar examples.
    balance: labels take turns among the examples (False: the nearest, whatever their labels).
    calibrate: calibrate a decision threshold. selection: "similar" (per row) or "fixed".
    optimize: search the instruction with `GeneticOptimizer` first, at most `max_calls` calls.
    resamples: bootstrap resamples of the report's intervals.
    """

    output: str | Path | None = None
    test_size: float = 0.2
    seed: int = 42
    label_column: str | None = None
    group_column: str | None = None
    metric_name: str | None = None
    criterion: str | None = None
    mapping: Mapping[Any, Any] | None = None
    models: ModelChoice = field(default_factory=ModelChoice)
    examples: int | Sequence[int] | str = 3
    similarity_threshold: float | None = None
    balance: bool = True
    calibrate: bool = True
    selection: str = "similar"
    optimize: bool = False
    max_calls: int | None = 1000
    resamples: int = 2000
    show_progress: bool = True

    def __post_init__(self) -> None:
        from assay.alignment.calibration import k_candidates

        k_candidates(self.examples)  # the check align() makes, before any model is loaded
        if isinstance(self.output, str):
            object.__setattr__(self, "output", Path(self.output))

    def reading(self) -> dict[str, Any]:
        """How label files are read (`load_labels`' options)."""
        return {
            "label_column": self.label_column,
            "group_column": self.group_column,
            "metric_name": self.metric_name,
            "criterion": self.criterion,
        }


@dataclass
class AlignmentRun:
    """What `align_judge` produced: the aligned metric, its held-out `AlignmentReport` (before and
    after, with intervals), and the file the state was written to (None: not written)."""

    metric: Any
    report: Any
    output: str | Path | None = None

    @property
    def notes(self) -> list[str]:
        """What the fit and the report noted (e.g. a label kind that has no threshold), once each."""
        state = self.metric.alignment
        return list(dict.fromkeys([*state.provenance.get("notes", []), *self.report.notes]))


def align_judge(
    metric: Any, train: Any, test: Any = None, options: AlignOptions | None = None
) -> AlignmentRun:
    """Align the judge `metric` (an object or an id) on `train` (a label file, a `LabeledSet` or
    rows) and report agreement on `test` (split off `train` when None), before and after."""
    from assay.alignment import GeneticOptimizer, InstructionConfig
    from assay.alignment.calibration import k_candidates

    options = options or AlignOptions()
    judge_metric = _judge(metric)
    train_rows, test_rows = _labels(train, options), _labels(test, options)
    models = options.models
    wants_embeddings = max(k_candidates(options.examples)) > 0 and options.selection == "similar"
    judge = models.named_llm()
    embedder = models.embeddings_for(wants_embeddings)
    if judge is not None:
        judge_metric = judge_metric.with_models(llm=judge)
    search = None
    if options.optimize:  # run inside align_and_validate: after the split, on the training rows
        optimizer = GeneticOptimizer(
            max_calls=options.max_calls, seed=options.seed, show_progress=options.show_progress
        )
        search = InstructionConfig(optimizer=optimizer)
    report = judge_metric.align_and_validate(
        train_rows,
        test_rows,
        embedding_model=embedder,
        test_size=options.test_size,
        random_state=options.seed,
        max_similar_examples=_k(options.examples),
        similarity_threshold=options.similarity_threshold,
        balance=options.balance,
        calibrate=options.calibrate,
        selection=options.selection,
        mapping=dict(options.mapping or {}),
        show_progress=options.show_progress,
        report_options={"n_resamples": options.resamples, "seed": options.seed},
        instruction_config=search,
    )
    run = AlignmentRun(judge_metric, report)
    if options.output is not None:
        saved = Path(judge_metric.save_alignment(options.output))
        attach_report(saved, report)
        run.output = saved
    return run


def _judge(metric: Any) -> Any:
    """The metric to align, which must ask a judge."""
    from assay.metrics.aligned import Alignable

    if isinstance(metric, str):
        from assay.metrics.registry import create_metric

        metric = create_metric(metric)
    if not isinstance(metric, Alignable):
        raise UsageError(f"{metric.name} is not an LLM judge; align works on judged metrics")
    return metric


def _labels(data: Any, options: AlignOptions) -> Any:
    """A label file read with the options' columns; anything else as given (None stays None)."""
    if isinstance(data, (str, Path)):
        from assay.alignment.labels import load_labels

        return load_labels(data, **options.reading())
    return data


def _k(examples: Any) -> Any:
    """`examples` as align() takes it: one number, a list, or "auto"."""
    if isinstance(examples, str):
        return examples
    return list(examples) if isinstance(examples, Sequence) else examples


def attach_report(path: Path, report: Any) -> None:
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


__all__ = ["AlignOptions", "AlignmentRun", "align_judge", "attach_report"]
