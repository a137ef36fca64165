"""typed trace scores (a label column) and the start of an experiment's current run segment

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Both columns are nullable and added in place: existing rows keep their values (a numeric score
has no label; an experiment that has not run since has no segment start, and its ETA falls back
to the first start).
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("trace_scores", sa.Column("label", sa.String(length=200), nullable=True))
    op.add_column(
        "experiments", sa.Column("run_started_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("experiments") as batch:
        batch.drop_column("run_started_at")
    with op.batch_alter_table("trace_scores") as batch:
        batch.drop_column("label")
