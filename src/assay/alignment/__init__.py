"""Aligning LLM judges with human labels (a surface above `assay.metrics`).

    from assay.alignment import load_labels
    train, test = load_labels("labels.jsonl").train_test_split(test_size=0.3, seed=7)
    report = Faithfulness(llm=judge).align_and_validate(train, test, embedding_model=embedder)
    rich.print(report.table())                 # a rich Table; print() would show its repr

    from assay.alignment import AlignOptions, align_judge    # what `assay align` runs
    run = align_judge("faithfulness", "labels.jsonl", options=AlignOptions(output="aligned.json"))

Labels in (`labels.py`, `annotations.py`), the default algorithms behind `metric.align`
(`align.py`: example pools, threshold calibration, validation), losses and optimizers
(`losses.py`, `optimizers/`), the report (`report.py`, `agreement.py`, `html.py`), a whole
run from label files to the aligned file (`fit.py`: `align_judge`), and a judge cascade's band
chosen against its stronger judge on your rows (`cascade_fit.py`: `fit_cascade`).
"""

from assay.alignment.align import Aligner, default_aligner
from assay.alignment.annotations import (
    MetricAnnotation,
    PromptAnnotation,
    SampleAnnotation,
    SingleMetricAnnotation,
)
from assay.alignment.calibration import calibrate_threshold, default_threshold
from assay.alignment.cascade_fit import CascadeCandidate, CascadeFit, afit_cascade, fit_cascade
from assay.alignment.config import DemonstrationConfig, InstructionConfig
from assay.alignment.fit import AlignmentRun, AlignOptions, align_judge
from assay.alignment.labels import (
    LabeledExample,
    LabeledSet,
    from_review_export,
    from_rows,
    load_labels,
    train_test_split,
)
from assay.alignment.losses import BinaryMetricLoss, HuberLoss, Loss, MSELoss
from assay.alignment.optimizers import DSPyOptimizer, GeneticOptimizer, Optimizer
from assay.alignment.report import AlignmentReport
from assay.alignment.saved import load_aligned_metric

__all__ = [
    "AlignOptions",
    "Aligner",
    "AlignmentReport",
    "AlignmentRun",
    "BinaryMetricLoss",
    "CascadeCandidate",
    "CascadeFit",
    "DSPyOptimizer",
    "DemonstrationConfig",
    "GeneticOptimizer",
    "HuberLoss",
    "InstructionConfig",
    "LabeledExample",
    "LabeledSet",
    "Loss",
    "MSELoss",
    "MetricAnnotation",
    "Optimizer",
    "PromptAnnotation",
    "SampleAnnotation",
    "SingleMetricAnnotation",
    "afit_cascade",
    "align_judge",
    "calibrate_threshold",
    "default_aligner",
    "default_threshold",
    "fit_cascade",
    "from_review_export",
    "from_rows",
    "load_aligned_metric",
    "load_labels",
    "train_test_split",
]
