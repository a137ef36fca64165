"""The tables. Every row but a project's belongs to a project (`project_id`, NOT NULL), and a child
points at its parent through the composite key `(project_id, parent_id)`, so the database itself
refuses a row that joins two projects. Migrations (`migrations/versions/`) must match this metadata:
a test compares them on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

JSONType = JSON().with_variant(JSONB(), "postgresql")

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ApiKey(Base):
    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key_id: Mapped[str] = mapped_column(String(32), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    secret_hmac: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[list] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Dataset(Base):
    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    source_type: Mapped[str] = mapped_column(String(1000), default="")
    source_file: Mapped[str] = mapped_column(String(1000), default="")
    latest_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DatasetVersion(Base):
    __tablename__ = "dataset_versions"
    __table_args__ = (
        UniqueConstraint("dataset_id", "version"),
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(["project_id", "dataset_id"], ["datasets.project_id", "datasets.id"], ondelete="CASCADE"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    dataset_id: Mapped[int] = mapped_column(Integer, index=True)
    version: Mapped[int] = mapped_column(Integer)
    questions_qty: Mapped[int] = mapped_column(Integer, default=0)
    example_count: Mapped[int] = mapped_column(Integer, default=0)
    content_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Example(Base):
    __tablename__ = "examples"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "dataset_version_id"], ["dataset_versions.project_id", "dataset_versions.id"],
                             ondelete="CASCADE"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    dataset_version_id: Mapped[int] = mapped_column(Integer, index=True)
    position: Mapped[int] = mapped_column(Integer)
    question: Mapped[str] = mapped_column(Text)
    ground_truth_context: Mapped[object] = mapped_column(JSONType)
    ground_truth_answer: Mapped[str] = mapped_column(Text, default="")


class Task(Base):
    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    generator_model: Mapped[str] = mapped_column(String(1000), default="")
    system_prompt: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Criteria(Base):
    __tablename__ = "criteria"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    phase: Mapped[str] = mapped_column(String(20), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    prompt: Mapped[str] = mapped_column(Text, default="")
    bool_true: Mapped[str] = mapped_column(Text, default="")
    bool_false: Mapped[str] = mapped_column(Text, default="")
    output_type: Mapped[str] = mapped_column(String(20), default="")
    header: Mapped[str] = mapped_column(Text, default="")
    likert_score_1: Mapped[str] = mapped_column(Text, default="")
    likert_score_2: Mapped[str] = mapped_column(Text, default="")
    likert_score_3: Mapped[str] = mapped_column(Text, default="")
    likert_score_4: Mapped[str] = mapped_column(Text, default="")
    likert_score_5: Mapped[str] = mapped_column(Text, default="")
    criteria_type: Mapped[str] = mapped_column(String(20), default="llm_judge")
    function_name: Mapped[str] = mapped_column(String(100), default="")
    match_type: Mapped[str] = mapped_column(String(20), default="")
    match_pattern: Mapped[str] = mapped_column(Text, default="")
    test_string: Mapped[str] = mapped_column(Text, default="")
    validation_status: Mapped[str] = mapped_column(String(20), default="valid")
    case_sensitive: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


__all__ = ["ApiKey", "Base", "Criteria", "Dataset", "DatasetVersion", "Example", "Project", "Task", "utcnow"]
