"""the dashboard's rollups of logged traces (issue #41, part 5)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06

`trace_rollups`: per project, UTC hour and model ('' for none) the traces, failed ones, input
and output tokens, cost and traces with a cost; `trace_latency_bins`: per project and hour how
many latencies fall in each logarithmic bin. Ingest, edits and retention keep them as deltas
(`storage/rollups.py`); here they are filled from the traces already stored (one pass over
each project's traces, by arrival number).

Retention deletes traces in batches; the tables whose rows go with a trace (ON DELETE CASCADE)
get an index on (project_id, trace_id), so each cascade is an index lookup, not a scan.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

CHILDREN = ("trace_scores", "trace_labels", "review_queue_items", "online_evaluations")


def upgrade() -> None:
    op.create_table(
        "trace_rollups",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("hour", sa.DateTime(timezone=True), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("traces", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost", sa.Float(), nullable=False),
        sa.Column("with_cost", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_trace_rollups_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "hour", "model", name="pk_trace_rollups"),
    )
    op.create_table(
        "trace_latency_bins",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("hour", sa.DateTime(timezone=True), nullable=False),
        sa.Column("bin", sa.Integer(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_trace_latency_bins_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "hour", "bin", name="pk_trace_latency_bins"),
    )
    for table in CHILDREN:
        op.create_index(f"ix_{table}_project_id_trace_id", table, ["project_id", "trace_id"])
    from assay.platform.server.storage.rollups import project_ids, rebuild

    session = Session(bind=op.get_bind())
    for project in project_ids(session):
        rebuild(session, project, experiments_known=False)  # no experiment_id before 0015
    session.flush()


def downgrade() -> None:
    for table in CHILDREN:
        op.drop_index(f"ix_{table}_project_id_trace_id", table_name=table)
    op.drop_table("trace_latency_bins")
    op.drop_table("trace_rollups")
