"""`assay benchmark`: measure how well metrics agree with human labels.

    from assay.benchmark import BenchmarkOptions, measure
    run = measure("wikieval", "faithfulness", BenchmarkOptions(data_dir="/data/metaeval", limit=10))
    run.figures["pairwise_accuracy"]  # value, low, high (95%), n

Suites (`suites.py`) read public human-labelled data sets in place (`data_dir` or
ASSAY_METAEVAL_DIR); `measure.measure` is what the command runs (engine, aligned state, prompt
variants, tuned threshold, results written); `runner.run_benchmark` scores a suite with a metric
through `evaluate()` and `ragas_side.run_ragas_benchmark` with Ragas' counterpart; `scoring.py`
turns scores into figures with the intervals of `assay.stats`; `report.py` writes and merges the
results.
"""

from assay.benchmark.measure import BenchmarkOptions, BenchmarkRun, measure
from assay.benchmark.report import merge_results, write_record
from assay.benchmark.runner import run_benchmark
from assay.benchmark.suites import SUITES, SuiteData, resolve_data_dir

__all__ = [
    "SUITES",
    "BenchmarkOptions",
    "BenchmarkRun",
    "SuiteData",
    "measure",
    "merge_results",
    "resolve_data_dir",
    "run_benchmark",
    "write_record",
]
