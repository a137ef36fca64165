"""Everything that touches the database: `db` (engines, Alembic `migrations/`), `models` (the
tables) and the repositories, which are the only code that builds queries on a project's tables
and which apply the project filter themselves: `repos` (datasets, tasks, criteria, the
`ProjectScoped` base), `traces`, `review`, `experiments`, `experiment_reports`, `trace_fields`
(review-condition fields over trace tables).

May import: `schemas`, `conditions`, `errors`, `config`. Never `api`, `ui`, `otlp`, `jobs`,
`auth` or the app factory.
"""
