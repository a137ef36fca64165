"""the traces of a model in a time range, by index

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06

`ix_logged_traces_project_model_created` on `logged_traces (project_id, model, created_at)`: a
dashboard or trace filter whose condition names a model (`model = 'gpt-4o'`, `model in (...)`)
finds that model's traces of the window as an index range, where it scanned every trace of the
window (350,000 in a 7-day range at a million traces; `storage/dashboard_matched.py`).
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

NAME = "ix_logged_traces_project_model_created"


def upgrade() -> None:
    op.create_index(NAME, "logged_traces", ["project_id", "model", "created_at"])


def downgrade() -> None:
    op.drop_index(NAME, table_name="logged_traces")
