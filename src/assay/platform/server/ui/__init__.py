"""The HTML web UI under /ui: `web` (templates, the guard, who is asking: the helpers every page
shares), one module of routes per area (`login`, `dashboard` with its charts' layout
`dashboard_charts`, `review`, `evaluators`, `traces`, `experiments`, `datasets`, `dataset_files`, `objects`,
`settings`, `trust`: a criterion's page), `mount` (mounts them all as an app of their own at /ui) and `demo` (the demo
project `assay serve --demo` seeds, its traffic in `demo_traffic`).

May import: `storage`, `schemas`, `auth`, `errors`, `state`. Never the app factory or `api`;
page modules import `web`, never `mount`.
"""
