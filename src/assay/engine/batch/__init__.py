"""Batch mode: a run's model calls through the provider's batch API, in waves, resumable.

`evaluate(..., batch=True)` / `assay evaluate --batch` (see docs/batch.md). `options.py` holds
`BatchOptions`; `llm.py` the judge twin that queues instead of sending; `waves.py` the coordinator
that turns the queue into batches; `journal.py` the run directory's record of them.
"""

from assay.engine.batch.options import BatchOptions, batch_options

__all__ = ["BatchOptions", "batch_options"]
