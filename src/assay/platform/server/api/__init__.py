"""The JSON API under /api/v1: one router per resource (`resources`: datasets, tasks, criteria,
experiments; `traces`, `scores`, `review`, `evaluators`, `pipelines`, `experiment_control`, `dashboard`) and
the request dependencies they share (`deps`: the server state, the key's scopes, paging).

May import: `storage`, `schemas`, `auth`, `errors`, `state`. Never the app factory (`app`), `ui`
or `otlp`: routers get what they need from `request.app.state` through `deps`.
"""
