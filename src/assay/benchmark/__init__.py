"""`assay benchmark`: measure how well metrics agree with human labels.

Suites (`suites.py`) read public human-labelled data sets in place (`--data-dir` or
ASSAY_METAEVAL_DIR); `runner.run_benchmark` scores them with a metric through `evaluate()`;
`stats.py` holds the statistics and their intervals; `report.py` writes and merges the results.
"""

from assay.benchmark.report import merge_results, write_record
from assay.benchmark.runner import run_benchmark
from assay.benchmark.suites import SUITES, SuiteData, resolve_data_dir

__all__ = [
    "SUITES",
    "SuiteData",
    "merge_results",
    "resolve_data_dir",
    "run_benchmark",
    "write_record",
]
