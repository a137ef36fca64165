"""Pydantic bodies the API and UI accept, with the server's limits: `bodies` (datasets, examples,
tasks, criteria, experiments, shared field types) and `traces` (traces, spans, scores, labels,
review queues).

May import: `conditions` only (no database, no FastAPI routes).
"""
