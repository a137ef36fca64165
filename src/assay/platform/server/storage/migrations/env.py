"""Alembic environment: runs on the connection that `assay.platform.server.storage.db.migrate` hands over."""

from alembic import context

from assay.platform.server.storage.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through assay.platform.server.storage.db.migrate(engine)")
context.configure(
    connection=connection, target_metadata=Base.metadata, render_as_batch=True, compare_type=True
)
with context.begin_transaction():
    context.run_migrations()
