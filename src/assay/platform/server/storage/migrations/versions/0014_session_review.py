"""review queues whose items are whole sessions (issue #43 part 2)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06

`review_queues.scope`: "trace" (every queue stored before) or "session". `review_session_items`:
a session-scope queue's items, one per (queue, session). `session_labels`: people's labels of
whole sessions, append-only, each with the content it was given on. `session_scores.queue_id`:
the queue whose judge gave a session score (None for an online evaluator's). New tables and
columns with defaults: nothing stored before changes.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column(
        "review_queues",
        sa.Column("scope", sa.String(length=20), nullable=False, server_default="trace"),
    )
    op.add_column("session_scores", sa.Column("queue_id", sa.Integer(), nullable=True))
    op.create_index(op.f("ix_session_scores_queue_id"), "session_scores", ["queue_id"])
    op.create_table(
        "review_session_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("queue_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("uncertainty", sa.Float(), nullable=True),
        sa.Column("inclusion_probability", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id", "queue_id"],
            ["review_queues.project_id", "review_queues.id"],
            name=op.f("fk_review_session_items_project_id_queue_id_review_queues"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_session_items")),
        sa.UniqueConstraint(
            "project_id",
            "queue_id",
            "session_id",
            name=op.f("uq_review_session_items_project_id_queue_id_session_id"),
        ),
    )
    for column in ("project_id", "queue_id"):
        op.create_index(op.f(f"ix_review_session_items_{column}"), "review_session_items", [column])
    op.create_index(
        "ix_review_session_items_order",
        "review_session_items",
        ["project_id", "queue_id", "status", "uncertainty"],
    )
    op.create_table(
        "session_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("criterion", sa.String(length=200), nullable=False),
        sa.Column("value", JSON, nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("queue_id", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("traces", sa.Integer(), nullable=False),
        sa.Column("content_key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_labels")),
    )
    op.create_index(op.f("ix_session_labels_queue_id"), "session_labels", ["queue_id"])
    op.create_index(
        "ix_session_labels_project_id_session_id",
        "session_labels",
        ["project_id", "session_id", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_session_labels_project_id_session_id", table_name="session_labels")
    op.drop_index(op.f("ix_session_labels_queue_id"), table_name="session_labels")
    op.drop_table("session_labels")
    op.drop_index("ix_review_session_items_order", table_name="review_session_items")
    for column in ("project_id", "queue_id"):
        op.drop_index(op.f(f"ix_review_session_items_{column}"), table_name="review_session_items")
    op.drop_table("review_session_items")
    op.drop_index(op.f("ix_session_scores_queue_id"), table_name="session_scores")
    with op.batch_alter_table("session_scores") as batch:
        batch.drop_column("queue_id")
    with op.batch_alter_table("review_queues") as batch:
        batch.drop_column("scope")
