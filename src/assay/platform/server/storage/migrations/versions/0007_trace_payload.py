"""a logged trace's payload stored once, compressed (issue #46)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06

`logged_traces.payload` (nullable) holds input, output, raw request and response, contexts and
spans of a trace as one zlib-compressed document in which each long string is kept once
(storage/trace_payload.py). New rows leave the old JSON columns empty. Rows already stored keep
their JSON columns and are read from them; a row moves to the payload when it is written again
(an edit, or spans that arrive later). Adding a nullable column rewrites nothing.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("logged_traces", sa.Column("payload", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("logged_traces") as batch:
        batch.drop_column("payload")
