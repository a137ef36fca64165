"""online evaluators that score whole sessions (issues #41 part 2/4, #43 part 2)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06

`online_evaluators.settle_seconds`: how long a session must be quiet before a session-scope
evaluator judges it (300 for the evaluators stored before). `online_session_evaluations`: one row
per (evaluator, version, session, content) taken, whose unique key makes "a session is never
scored twice for the same content by the same version" the database's guarantee;
`session_scores`: the scores of whole sessions, append-only like `trace_scores`. New tables and a
column with a default: nothing stored before changes.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column(
        "online_evaluators",
        sa.Column("settle_seconds", sa.Integer(), nullable=False, server_default="300"),
    )
    op.create_table(
        "online_session_evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("evaluator_id", sa.Integer(), nullable=False),
        sa.Column("evaluator_version", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("content_key", sa.String(length=64), nullable=False),
        sa.Column("traces", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id", "evaluator_id"],
            ["online_evaluators.project_id", "online_evaluators.id"],
            name="fk_online_session_evaluations_evaluator",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_session_evaluations")),
        sa.UniqueConstraint(
            "evaluator_id",
            "evaluator_version",
            "session_id",
            "content_key",
            name="uq_online_session_evaluations_content",
        ),
    )
    for column in ("evaluator_id", "judged_at", "project_id"):
        op.create_index(
            op.f(f"ix_online_session_evaluations_{column}"),
            "online_session_evaluations",
            [column],
            unique=False,
        )
    op.create_index(
        "ix_online_session_evaluations_status_due_at",
        "online_session_evaluations",
        ["status", "due_at"],
    )
    op.create_table(
        "session_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("criterion", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("outcome", JSON, nullable=False),
        sa.Column("source", sa.String(length=1000), nullable=False),
        sa.Column("traces", sa.Integer(), nullable=False),
        sa.Column("content_key", sa.String(length=64), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_scores")),
    )
    op.create_index(
        "ix_session_scores_project_id_session_id",
        "session_scores",
        ["project_id", "session_id", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_session_scores_project_id_session_id", table_name="session_scores")
    op.drop_table("session_scores")
    op.drop_index(
        "ix_online_session_evaluations_status_due_at", table_name="online_session_evaluations"
    )
    for column in ("evaluator_id", "judged_at", "project_id"):
        op.drop_index(
            op.f(f"ix_online_session_evaluations_{column}"), table_name="online_session_evaluations"
        )
    op.drop_table("online_session_evaluations")
    with op.batch_alter_table("online_evaluators") as batch:
        batch.drop_column("settle_seconds")
