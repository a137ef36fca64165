"""The assay server: FastAPI app, SQLAlchemy storage, Alembic migrations, API keys.

Needs `pip install 'assay[platform]'`; importing this package without it raises `MissingDependency`
with that line. The SDK (`assay.platform.sdk`) never imports it.
"""

from assay._util.deps import require

for _module, _package in (
    ("fastapi", "fastapi"),
    ("uvicorn", "uvicorn"),
    ("sqlalchemy", "sqlalchemy"),
    ("alembic", "alembic"),
    ("re2", "google-re2"),
):
    require(_module, extra="platform", package=_package, feature="the assay server")
