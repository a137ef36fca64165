"""sessions and the trace explorer's sort keys (issue #41, part 4)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

`logged_traces.session_id` names the conversation a trace belongs to: its metadata's `session_id`
(the SDK's `monitor(metadata=...)` or `session(...)`; OTLP's and OpenInference's `session.id`),
else its `conversation_id` (GenAI's `gen_ai.conversation.id`). It is a column of its own, indexed
per project with its time, so a session's traces and the list of sessions are an index
range, not a scan of every trace's JSON. Traces stored before are given theirs from their
metadata here. Two more per-project indexes serve the traces table's sort by latency and tokens.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

SESSION_MAX = 200


def upgrade() -> None:
    op.add_column(
        "logged_traces", sa.Column("session_id", sa.String(length=SESSION_MAX), nullable=True)
    )
    if op.get_bind().dialect.name == "postgresql":
        found = "coalesce(meta->>'session_id', meta->>'conversation_id')"
    else:
        found = (
            "coalesce(json_extract(meta, '$.session_id'), json_extract(meta, '$.conversation_id'))"
        )
    # a number or an object in the metadata is kept as its text, cut to the column's size
    op.execute(
        f"UPDATE logged_traces SET session_id = substr(CAST({found} AS TEXT), 1, {SESSION_MAX}) "
        f"WHERE {found} IS NOT NULL"
    )
    op.execute("UPDATE logged_traces SET session_id = NULL WHERE session_id = ''")
    op.create_index(
        "ix_logged_traces_project_session",
        "logged_traces",
        ["project_id", "session_id", "created_at"],
    )
    op.create_index(
        "ix_logged_traces_project_latency", "logged_traces", ["project_id", "latency_ms"]
    )
    op.create_index("ix_logged_traces_project_tokens", "logged_traces", ["project_id", "tokens"])


def downgrade() -> None:
    op.drop_index("ix_logged_traces_project_tokens", table_name="logged_traces")
    op.drop_index("ix_logged_traces_project_latency", table_name="logged_traces")
    op.drop_index("ix_logged_traces_project_session", table_name="logged_traces")
    with op.batch_alter_table("logged_traces") as batch:
        batch.drop_column("session_id")
