"""review queues ordered and sampled by the judge's uncertainty (issue #42, part 4)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06

`review_queues.order_by` ("arrival" or "uncertainty") and `sample_rate` (None: every matching
trace is reviewed); `review_queue_items.uncertainty` (how unsure the queue's judge was, 0 to 1,
once it has judged the trace) and `inclusion_probability` (the chance the item had of being
kept for review, stored when it was decided, so that an estimate from the labels can weight each
by its inverse and stay unbiased). All added in place with defaults that keep old queues as they
were: arrival order, no sampling.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "review_queues",
        sa.Column("order_by", sa.String(length=20), nullable=False, server_default="arrival"),
    )
    op.add_column("review_queues", sa.Column("sample_rate", sa.Float(), nullable=True))
    op.add_column("review_queue_items", sa.Column("uncertainty", sa.Float(), nullable=True))
    op.add_column(
        "review_queue_items", sa.Column("inclusion_probability", sa.Float(), nullable=True)
    )
    op.create_index(
        "ix_review_items_uncertainty",
        "review_queue_items",
        ["project_id", "queue_id", "status", "uncertainty"],
    )


def downgrade() -> None:
    op.drop_index("ix_review_items_uncertainty", table_name="review_queue_items")
    with op.batch_alter_table("review_queue_items") as batch:
        batch.drop_column("inclusion_probability")
        batch.drop_column("uncertainty")
    with op.batch_alter_table("review_queues") as batch:
        batch.drop_column("sample_rate")
        batch.drop_column("order_by")
