"""Background work: the job `worker` thread, job `claims` (who runs which job, heartbeats,
cancellation), an experiment's `run` (its `generation` of outputs through a task or RAG pipeline
and `judging` of them) and the `review_judge` that pre-scores review-queue items.

May import: `storage`, `schemas`, `errors`. Never `api`, `ui`, `otlp` or the app factory.
"""
