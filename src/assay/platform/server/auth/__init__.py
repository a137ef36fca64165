"""Who may ask: `keys` (API keys: hashing, scopes, the `Principal` a key stands for, projects),
`users` (web-UI users, memberships and sessions) and `admin` (key management for `assay keys`).

May import: `storage`, `config`, `errors`. Never `api`, `ui`, `jobs`, `otlp` or the app factory.
"""
