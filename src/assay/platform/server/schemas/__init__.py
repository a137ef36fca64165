"""Pydantic bodies the API and UI accept, with the server's limits: `bodies` (datasets, examples,
tasks, criteria, experiments, shared field types), `traces` (traces, spans, scores, labels,
review queues) and `evaluators` (online evaluators, a backfill's range).

May import: `conditions` only (no database, no FastAPI routes).
"""
