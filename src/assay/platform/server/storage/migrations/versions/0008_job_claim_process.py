"""the process that holds a job's claim (issue #45)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06

`jobs.claimed_host`, `claimed_pid` and `claimed_started` name the claiming worker's process (its
host as pids are meaningful there, its pid, and the process's start time: jobs/holder.py). A
worker on the same host that finds the pid free, or taken by a later process, takes the job over
at once rather than after the heartbeat's timeout. All three are nullable and added in place: a
job claimed before has none, and its claim is taken over when its heartbeat goes stale, as before.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("claimed_host", sa.String(length=255), nullable=True))
    op.add_column("jobs", sa.Column("claimed_pid", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("claimed_started", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("claimed_started")
        batch.drop_column("claimed_pid")
        batch.drop_column("claimed_host")
