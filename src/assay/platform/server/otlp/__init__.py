"""OTLP/HTTP trace ingest at /v1/traces: `ingest` (the route: decoding protobuf or JSON, grouping
spans into traces, storing them), `mapping` (OTLP spans to assay traces, scores and labels) and
`content` (reading prompts and completions out of GenAI semantic-convention attributes).

May import: `storage`, `schemas`, `errors`, `state`. Never `api`, `ui` or the app factory.
"""
