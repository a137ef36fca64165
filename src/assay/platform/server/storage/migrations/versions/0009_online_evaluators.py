"""online evaluators (issue #41, part 2)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06

`online_evaluators` holds the rules that score arriving traces with no human in the loop;
`online_evaluations` one row per (evaluator, version, trace) taken, whose unique key makes "a
trace is never scored twice by the same version" the database's guarantee, even across a crash;
`jobs.evaluator_id` names an `online_eval` job's evaluator. New tables and a nullable column:
nothing stored before changes.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "online_evaluators",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("condition", sa.Text(), nullable=False),
        sa.Column("sample_rate", sa.Float(), nullable=False),
        sa.Column("criteria", JSON, nullable=False),
        sa.Column("judge_model", sa.String(length=1000), nullable=False),
        sa.Column("scope", sa.String(length=20), nullable=False),
        sa.Column("daily_budget", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_online_evaluators_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_evaluators")),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_online_evaluators_project_id_id")),
        sa.UniqueConstraint(
            "project_id", "name", name=op.f("uq_online_evaluators_project_id_name")
        ),
    )
    op.create_index(
        op.f("ix_online_evaluators_project_id"), "online_evaluators", ["project_id"], unique=False
    )
    op.create_table(
        "online_evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("evaluator_id", sa.Integer(), nullable=False),
        sa.Column("evaluator_version", sa.Integer(), nullable=False),
        sa.Column("trace_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id", "evaluator_id"],
            ["online_evaluators.project_id", "online_evaluators.id"],
            name=op.f("fk_online_evaluations_project_id_evaluator_id_online_evaluators"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            name=op.f("fk_online_evaluations_project_id_trace_id_logged_traces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_online_evaluations")),
        sa.UniqueConstraint(
            "evaluator_id",
            "evaluator_version",
            "trace_id",
            name=op.f("uq_online_evaluations_evaluator_id_evaluator_version_trace_id"),
        ),
    )
    for column in ("evaluator_id", "judged_at", "project_id", "status"):
        op.create_index(
            op.f(f"ix_online_evaluations_{column}"), "online_evaluations", [column], unique=False
        )
    op.add_column("jobs", sa.Column("evaluator_id", sa.Integer(), nullable=True))
    op.create_index(op.f("ix_jobs_evaluator_id"), "jobs", ["evaluator_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_jobs_evaluator_id"), table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("evaluator_id")
    for column in ("evaluator_id", "judged_at", "project_id", "status"):
        op.drop_index(op.f(f"ix_online_evaluations_{column}"), table_name="online_evaluations")
    op.drop_table("online_evaluations")
    op.drop_index(op.f("ix_online_evaluators_project_id"), table_name="online_evaluators")
    op.drop_table("online_evaluators")
