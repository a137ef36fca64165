"""Everything that touches the database: `db` (engines; Alembic runs `migrations/` from here),
`models` (the tables: one declarative metadata that the migrations must match, kept in one
module on purpose), and the repositories, which are the only code that builds queries on a
project's tables and which apply the project filter themselves (`repos.ProjectScoped`, built for
one project; every query starts at its `_select` / `_columns`):

- `repos`: the base, datasets and their versions, tasks, criteria;
- `traces` (`TraceRepo`) and `trace_rows` (a trace as row values and as JSON, no queries);
- `review` (`QueueRepo`: review queues, their items, the judge's chunks), `review_locks`,
  `review_judging` (queueing a queue's judge job, which of its scores stand, waking a queue
  whose judge was down);
- `evaluators` (`EvaluatorRepo`: online evaluators, the traces they take) and
  `evaluator_runs` (`EvaluationRuns`: their job's reads, and its stores, once per version);
- `experiments` (`ExperimentRepo`: submission, cancel, resume, the worker's writes) on top of
  `experiment_reports` (progress, results, rows);
- `pipelines` (`PipelineRepo`: registered RAG pipelines);
- `access` (users, a project's members `MemberRepo`, its API keys `KeyRepo`);
- `trace_fields`: the fields review conditions compile to, over the trace tables;
- `dashboard` (`DashboardRepo`: the dashboard's queries over a time window), with
  `dashboard_window` (the window and its buckets), `dashboard_matched` (a condition's matching
  traces, written once to a temporary table) and `dashboard_figures` (the figures as JSON);
- `trust` (`TrustRepo`: each trace's latest score and label per criterion in a window), with
  `trust_cards` (the judge a criterion's scores come from, and its card) and `trust_figures`
  (the corrected mean and the agreement alert as JSON).

tests/platform/test_queries_in_storage.py fails on a query of a project's table built elsewhere.

May import: `schemas`, `conditions`, `errors`, `config`. Never `api`, `ui`, `otlp`, `jobs`,
`auth`, `state` or the app factory.
"""
