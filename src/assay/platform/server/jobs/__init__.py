"""Background work: the job `worker` thread, job `claims` (who runs which job, heartbeats,
cancellation), an experiment's `run` (its `generation` of outputs through a task or RAG pipeline
and `judging` of them), the `review_judge` that pre-scores review-queue items and the
`online_eval` job that judges the traces an online evaluator took.

May import: `storage`, `schemas`, `errors`. Never `api`, `ui`, `otlp` or the app factory.
"""
