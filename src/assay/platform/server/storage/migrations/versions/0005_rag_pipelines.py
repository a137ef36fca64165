"""registered RAG pipelines

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rag_pipelines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_rag_pipelines_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rag_pipelines")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_rag_pipelines_project_id_name")),
    )
    op.create_index(
        op.f("ix_rag_pipelines_project_id"), "rag_pipelines", ["project_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_rag_pipelines_project_id"), table_name="rag_pipelines")
    op.drop_table("rag_pipelines")
