"""a project's own retention horizon

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06

`projects.retention_days`: how many days the project's logged traces are kept (its admins set it
through `PATCH /api/v1/project/settings` or the settings page); NULL, as for every project stored
before, keeps the server's default (`assay serve --retention-days`, else every trace).
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("projects", sa.Column("retention_days", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("retention_days")
