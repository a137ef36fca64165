"""an experiment's published generations kept apart from production traffic

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

`logged_traces.experiment_id`: the experiment whose generation a logged trace is (the server
publishes each generation as a trace, `storage/experiment_traces.py`); NULL for traffic. The
traces published before are found by their id, which is derived from (project, experiment,
cohort, example) of a generation row in `traces` (so a client's trace that only looks like one,
by its tag or metadata, stays traffic), and their parts are taken out of the dashboard's rollups,
which no longer count experiments' generations.
"""

import uuid

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# `experiment_traces.logged_id`'s namespace, as it was when these traces were published
NAMESPACE = uuid.UUID("6c3f2a52-6f0b-4c4e-9d7e-2f1b0e5a9c41")
CHUNK = 500

generations = sa.table(
    "traces",
    sa.column("project_id", sa.Integer),
    sa.column("experiment_id", sa.Integer),
    sa.column("cohort_id", sa.Integer),
    sa.column("example_id", sa.Integer),
)
logged = sa.table(
    "logged_traces",
    sa.column("project_id", sa.Integer),
    sa.column("id", sa.String),
    sa.column("experiment_id", sa.Integer),
)


def upgrade() -> None:
    op.add_column("logged_traces", sa.Column("experiment_id", sa.Integer(), nullable=True))
    bind = op.get_bind()
    ids: dict[tuple[int, int], list[str]] = {}
    rows = bind.execute(
        sa.select(
            generations.c.project_id,
            generations.c.experiment_id,
            generations.c.cohort_id,
            generations.c.example_id,
        ).where(generations.c.experiment_id.is_not(None))
    )
    for project, experiment, cohort, example in rows:
        name = f"{project}/{experiment}/{cohort or 0}/{example or 0}"
        ids.setdefault((project, experiment), []).append(str(uuid.uuid5(NAMESPACE, name)))
    for (project, experiment), found in sorted(ids.items()):
        for start in range(0, len(found), CHUNK):
            bind.execute(
                sa.update(logged)
                .where(
                    logged.c.project_id == project, logged.c.id.in_(found[start : start + CHUNK])
                )
                .values(experiment_id=experiment)
            )
    from assay.platform.server.storage import models
    from assay.platform.server.storage.rollups import BASE_COLUMNS, Deltas, part_of

    # the rollups (0013) counted them: take each one's part out (read without experiment_id, so
    # the part counts as traffic did)
    session = Session(bind=bind)
    T = models.LoggedTrace
    for project in sorted({p for p, _e in ids}):
        deltas, after = Deltas(project), 0
        while True:
            found_rows = session.execute(
                sa.select(T.seq, *BASE_COLUMNS)
                .where(T.project_id == project, T.experiment_id.is_not(None), T.seq > after)
                .order_by(T.seq)
                .limit(5_000)
            ).all()
            if not found_rows:
                break
            for row in found_rows:
                deltas.add(part_of(row), -1)
            after = found_rows[-1].seq
        deltas.write(session)
    session.flush()


def downgrade() -> None:
    with op.batch_alter_table("logged_traces") as batch:
        batch.drop_column("experiment_id")
