"""The tables. Every row but a project's belongs to a project (`project_id`, NOT NULL), and a child
points at its parent through the composite key `(project_id, parent_id)`, so the database itself
refuses a row that joins two projects. Migrations (`migrations/versions/`) must match this metadata:
a test compares them on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from assay.platform.server.storage.trace_payload import PayloadFields

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
    # days its logged traces are kept; None keeps the server's default (--retention-days)
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)


class ApiKey(Base):
    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key_id: Mapped[str] = mapped_column(String(32), unique=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
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
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
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
        ForeignKeyConstraint(
            ["project_id", "dataset_id"], ["datasets.project_id", "datasets.id"], ondelete="CASCADE"
        ),
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
        ForeignKeyConstraint(
            ["project_id", "dataset_version_id"],
            ["dataset_versions.project_id", "dataset_versions.id"],
            ondelete="CASCADE",
        ),
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
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    generator_model: Mapped[str] = mapped_column(String(1000), default="")
    system_prompt: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Criteria(Base):
    __tablename__ = "criteria"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
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


class Experiment(Base):
    """An experiment pins what it ran on: the dataset version, a snapshot of the task and of each criterion."""

    __tablename__ = "experiments"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(
            ["project_id", "dataset_version_id"],
            ["dataset_versions.project_id", "dataset_versions.id"],
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    dataset_id: Mapped[int] = mapped_column(Integer)
    dataset_version_id: Mapped[int] = mapped_column(Integer, index=True)
    dataset_version: Mapped[int] = mapped_column(Integer)
    task: Mapped[dict] = mapped_column(JSONType)
    criteria: Mapped[list] = mapped_column(JSONType)
    judge_model: Mapped[str] = mapped_column(String(1000), default="")
    status: Mapped[str] = mapped_column(String(20), default="queued")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # when the current run segment began (its job's latest claim): the ETA's rate counts from here
    run_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ExperimentCohort(Base):
    __tablename__ = "experiment_cohorts"
    __table_args__ = (
        UniqueConstraint("experiment_id", "position"),
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(
            ["project_id", "experiment_id"],
            ["experiments.project_id", "experiments.id"],
            ondelete="CASCADE",
        ),
        CheckConstraint(
            "(generator_model IS NULL) <> (rag_pipeline IS NULL)", name="model_xor_pipeline"
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    experiment_id: Mapped[int] = mapped_column(Integer, index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    generator_model: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    rag_pipeline: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    system_prompt: Mapped[str | None] = mapped_column(Text, nullable=True)


class Trace(Base):
    """One generation (an experiment's cohort × example, or, later, a logged call of an application)."""

    __tablename__ = "traces"
    __table_args__ = (
        UniqueConstraint("experiment_id", "cohort_id", "example_id"),
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(
            ["project_id", "experiment_id"],
            ["experiments.project_id", "experiments.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    experiment_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    cohort_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    example_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    input: Mapped[str] = mapped_column(Text, default="")
    output: Mapped[str | None] = mapped_column(Text, nullable=True)
    contexts: Mapped[list] = mapped_column(JSONType)
    raw_input: Mapped[object] = mapped_column(JSONType)
    raw_output: Mapped[object | None] = mapped_column(JSONType, nullable=True)
    meta: Mapped[dict] = mapped_column("metadata", JSONType)
    model: Mapped[str] = mapped_column(String(1000), default="")
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    error_type: Mapped[str | None] = mapped_column(String(200), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Score(Base):
    """A criterion's typed outcome on one trace: ok (value), skipped (reason) or error (type, message)."""

    __tablename__ = "scores"
    __table_args__ = (
        UniqueConstraint("trace_id", "criteria_key"),
        ForeignKeyConstraint(
            ["project_id", "trace_id"], ["traces.project_id", "traces.id"], ondelete="CASCADE"
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    experiment_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    trace_id: Mapped[int] = mapped_column(Integer, index=True)
    criteria_key: Mapped[int] = mapped_column(Integer)
    criteria_name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_type: Mapped[str | None] = mapped_column(String(200), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Job(Base):
    """Work for the workers: claimed with UPDATE … RETURNING (FOR UPDATE SKIP LOCKED on PostgreSQL),
    kept with a heartbeat; a running job whose heartbeat went stale, or whose worker's process is
    provably gone (same host, its pid free or reused), is claimed again and resumes."""

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(40))
    experiment_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    queue_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    # an online_eval job's evaluator (jobs/online_eval.py)
    evaluator_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # the claiming worker's process (jobs/holder.py): a worker on the same host takes over at once
    # from one that is provably gone, instead of waiting for its heartbeat to go stale
    claimed_host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    claimed_pid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    claimed_started: Mapped[str | None] = mapped_column(String(40), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


# -- logged application traces and review queues (issue #17) ------------------------------------------
class LoggedTrace(PayloadFields, Base):
    """One call of an application, sent by the SDK's `monitor` or over OTLP. The id is the client's
    (a UUID string), so a re-sent trace is recognised; `seq` is the order of arrival (paging).
    Input, output, raw request and response, contexts and spans are kept once, compressed, in
    `payload` (`trace_payload`; read as `row.input`, `row.spans`, ...); the `legacy_*` JSON
    columns hold them only for rows stored before migration 0007."""

    __tablename__ = "logged_traces"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        # a session's traces and the list of sessions read this index, never the metadata JSON
        Index("ix_logged_traces_project_session", "project_id", "session_id", "created_at"),
        # the traces table sorts by these (migration 0010)
        Index("ix_logged_traces_project_latency", "project_id", "latency_ms"),
        Index("ix_logged_traces_project_tokens", "project_id", "tokens"),
        # a condition naming a model, over a dashboard's window (migration 0017)
        Index("ix_logged_traces_project_model_created", "project_id", "model", "created_at"),
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, index=True
    )
    version: Mapped[int] = mapped_column(Integer, default=1)
    legacy_input: Mapped[object | None] = mapped_column("input", JSONType, nullable=True)
    legacy_output: Mapped[object | None] = mapped_column("output", JSONType, nullable=True)
    legacy_raw_input: Mapped[object | None] = mapped_column("raw_input", JSONType, nullable=True)
    legacy_raw_output: Mapped[object | None] = mapped_column("raw_output", JSONType, nullable=True)
    input_text: Mapped[str] = mapped_column(Text, default="")
    output_text: Mapped[str] = mapped_column(Text, default="")
    legacy_contexts: Mapped[list] = mapped_column("contexts", JSONType)
    payload: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    meta: Mapped[dict] = mapped_column(JSONType)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    input_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    output_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[list] = mapped_column(JSONType)
    legacy_spans: Mapped[list] = mapped_column("spans", JSONType)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)
    # the conversation the trace belongs to: metadata `session_id` (OTLP `session.id`), else
    # `conversation_id`; set at ingest and on a metadata edit (`trace_rows.session_of`)
    session_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # the experiment whose generation this trace is, set only when the server publishes it
    # (`experiment_traces.py`; migration 0015 for those published before); None for traffic.
    # The dashboard, its rollups and evaluators' backfills leave such traces out.
    experiment_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class TraceRevision(Base):
    """The state of a trace before one edit (edits keep the original)."""

    __tablename__ = "trace_revisions"
    __table_args__ = (
        UniqueConstraint("project_id", "trace_id", "version"),
        ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    trace_id: Mapped[str] = mapped_column(String(36))
    version: Mapped[int] = mapped_column(Integer)
    snapshot: Mapped[dict] = mapped_column(JSONType)
    edited_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TraceScore(Base):
    """A judge's (or an OTLP evaluation event's) score of a trace on one criterion; append-only."""

    __tablename__ = "trace_scores"
    __table_args__ = (
        # retention deletes traces: each cascade here is an index lookup (migration 0013)
        Index("ix_trace_scores_project_id_trace_id", "project_id", "trace_id"),
        ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    trace_id: Mapped[str] = mapped_column(String(36), index=True)
    criterion: Mapped[str] = mapped_column(String(200))
    # an ok score is a number, a bool (value 1.0/0.0) or a categorical label (value NULL)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    label: Mapped[str | None] = mapped_column(String(200), nullable=True)
    outcome: Mapped[dict] = mapped_column(JSONType)
    source: Mapped[str] = mapped_column(String(1000))
    queue_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TraceLabel(Base):
    """A person's label of a trace on one criterion; append-only, with its author (the API key)."""

    __tablename__ = "trace_labels"
    __table_args__ = (
        # retention deletes traces: each cascade here is an index lookup (migration 0013)
        Index("ix_trace_labels_project_id_trace_id", "project_id", "trace_id"),
        ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    trace_id: Mapped[str] = mapped_column(String(36), index=True)
    criterion: Mapped[str] = mapped_column(String(200))
    value: Mapped[object] = mapped_column(JSONType)
    author: Mapped[str] = mapped_column(String(200))
    queue_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewQueue(Base):
    __tablename__ = "review_queues"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    condition: Mapped[str] = mapped_column(Text, default="")
    criteria: Mapped[list] = mapped_column(JSONType)
    judge_model: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    dataset: Mapped[str | None] = mapped_column(String(200), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # "arrival" or "uncertainty" (the judge's least sure first); sample_rate: None reviews every
    # matching trace, else about that share, the uncertain ones likelier (storage/review_sampling)
    order_by: Mapped[str] = mapped_column(String(20), default="arrival", server_default="arrival")
    sample_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    # "trace": its items are the matching traces; "session": the sessions of the matching
    # traces, one item each (`review_session_items`; storage/review_sessions.py). Set at creation.
    scope: Mapped[str] = mapped_column(String(20), default="trace", server_default="trace")


class ReviewQueueItem(Base):
    """A trace in a queue: it entered when it matched the queue's condition."""

    __tablename__ = "review_queue_items"
    __table_args__ = (
        # retention deletes traces: each cascade here is an index lookup (migration 0013)
        Index("ix_review_queue_items_project_id_trace_id", "project_id", "trace_id"),
        UniqueConstraint("project_id", "queue_id", "trace_id"),
        Index("ix_review_items_uncertainty", "project_id", "queue_id", "status", "uncertainty"),
        ForeignKeyConstraint(
            ["project_id", "queue_id"],
            ["review_queues.project_id", "review_queues.id"],
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    queue_id: Mapped[int] = mapped_column(Integer, index=True)
    trace_id: Mapped[str] = mapped_column(String(36))
    entered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    status: Mapped[str] = mapped_column(String(20), default="pending")  # or done, unsampled
    uncertainty: Mapped[float | None] = mapped_column(Float, nullable=True)  # once judged, 0-1
    inclusion_probability: Mapped[float | None] = mapped_column(Float, nullable=True)


class ReviewSessionItem(Base):
    """A session in a session-scope queue: it entered when one of its traces matched the queue's
    condition. One item per session however it grows; what it holds is the session as it is
    when read, and each label records the content it was given on (`session_labels`)."""

    __tablename__ = "review_session_items"
    __table_args__ = (
        UniqueConstraint("project_id", "queue_id", "session_id"),
        Index("ix_review_session_items_order", "project_id", "queue_id", "status", "uncertainty"),
        ForeignKeyConstraint(
            ["project_id", "queue_id"],
            ["review_queues.project_id", "review_queues.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    queue_id: Mapped[int] = mapped_column(Integer, index=True)
    session_id: Mapped[str] = mapped_column(String(200))
    entered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    status: Mapped[str] = mapped_column(String(20), default="pending")  # or done, unsampled
    uncertainty: Mapped[float | None] = mapped_column(Float, nullable=True)
    inclusion_probability: Mapped[float | None] = mapped_column(Float, nullable=True)


class SessionLabel(Base):
    """A person's label of a whole session on one criterion; append-only, like `trace_labels`.
    It keeps the content it was given on (how many traces, and `content_key`, the trace count
    and latest arrival number), so a label given before the session grew says so. Like
    `session_scores`, it stays when the session's traces are deleted."""

    __tablename__ = "session_labels"
    __table_args__ = (
        Index("ix_session_labels_project_id_session_id", "project_id", "session_id", "id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer)
    session_id: Mapped[str] = mapped_column(String(200))
    criterion: Mapped[str] = mapped_column(String(200))
    value: Mapped[object] = mapped_column(JSONType)
    author: Mapped[str] = mapped_column(String(200))
    queue_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    comment: Mapped[str] = mapped_column(Text, default="")
    traces: Mapped[int] = mapped_column(Integer)
    content_key: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- online evaluators (issue #41, part 2) ------------------------------------------------------------
class OnlineEvaluator(Base):
    """A rule that scores arriving traces with no human in the loop: the traces matching
    `condition`, sampled at `sample_rate`, are judged on `criteria` by `judge_model`. `version`
    goes up when what decides a score changes (condition, sample rate, criteria, judge, scope);
    a trace is scored at most once per version (`OnlineEvaluation`'s unique row)."""

    __tablename__ = "online_evaluators"
    __table_args__ = (UniqueConstraint("project_id", "name"), UniqueConstraint("project_id", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    condition: Mapped[str] = mapped_column(Text, default="")
    sample_rate: Mapped[float] = mapped_column(Float, default=1.0)
    criteria: Mapped[list] = mapped_column(JSONType)
    judge_model: Mapped[str] = mapped_column(String(1000))
    scope: Mapped[str] = mapped_column(String(20), default="trace")
    # session scope: a session is judged once it has been quiet this long (no new trace)
    settle_seconds: Mapped[int] = mapped_column(Integer, default=300, server_default="300")
    daily_budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="active")
    version: Mapped[int] = mapped_column(Integer, default=1)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_error_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class OnlineEvaluation(Base):
    """One trace taken by one version of an evaluator: `pending` until the worker judges it, then
    `scored`, `error` (a criterion's outcome is an error), `skipped_budget` (the day's budget was
    spent; `reason` says which), `judge_down` (the judge did not answer that run; `reason` says
    why, and the next run judges it) or `superseded` (the evaluator changed before it was
    judged). The unique (evaluator, version, trace) makes "never scored twice" the database's
    guarantee."""

    __tablename__ = "online_evaluations"
    __table_args__ = (
        # retention deletes traces: each cascade here is an index lookup (migration 0013)
        Index("ix_online_evaluations_project_id_trace_id", "project_id", "trace_id"),
        UniqueConstraint("evaluator_id", "evaluator_version", "trace_id"),
        ForeignKeyConstraint(
            ["project_id", "evaluator_id"],
            ["online_evaluators.project_id", "online_evaluators.id"],
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["project_id", "trace_id"],
            ["logged_traces.project_id", "logged_traces.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    evaluator_id: Mapped[int] = mapped_column(Integer, index=True)
    evaluator_version: Mapped[int] = mapped_column(Integer)
    trace_id: Mapped[str] = mapped_column(String(36))
    status: Mapped[str] = mapped_column(String(20), default="pending", index=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    entered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    judged_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True, index=True
    )


class SessionEvaluation(Base):
    """One content of one session taken by one version of a session-scope evaluator. The content
    key (the session's trace count and latest arrival number) changes when a trace arrives, so
    a session is judged again after new traces, and never twice for the same content: the
    unique (evaluator, version, session, content) is the database's guarantee. `due_at` is the
    last arrival plus the evaluator's settle interval; the worker judges a pending row once it is
    due. An older pending content is `superseded` when a newer one is taken."""

    __tablename__ = "online_session_evaluations"
    __table_args__ = (
        # named here: the convention's names pass PostgreSQL's 63 characters
        UniqueConstraint(
            "evaluator_id",
            "evaluator_version",
            "session_id",
            "content_key",
            name="uq_online_session_evaluations_content",
        ),
        Index("ix_online_session_evaluations_status_due_at", "status", "due_at"),
        ForeignKeyConstraint(
            ["project_id", "evaluator_id"],
            ["online_evaluators.project_id", "online_evaluators.id"],
            ondelete="CASCADE",
            name="fk_online_session_evaluations_evaluator",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    evaluator_id: Mapped[int] = mapped_column(Integer, index=True)
    evaluator_version: Mapped[int] = mapped_column(Integer)
    session_id: Mapped[str] = mapped_column(String(200))
    content_key: Mapped[str] = mapped_column(String(64))
    traces: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    entered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    judged_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True, index=True
    )


class SessionScore(Base):
    """A judge's score of a whole session on one criterion; append-only, like `trace_scores`.
    Sessions are no table of their own (a session is the traces naming it), so the score keeps
    the session's id, and how many traces and which content it judged. It stays when the
    session's traces are deleted."""

    __tablename__ = "session_scores"
    __table_args__ = (
        Index("ix_session_scores_project_id_session_id", "project_id", "session_id", "id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer)
    session_id: Mapped[str] = mapped_column(String(200))
    criterion: Mapped[str] = mapped_column(String(200))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    outcome: Mapped[dict] = mapped_column(JSONType)
    source: Mapped[str] = mapped_column(String(1000))
    traces: Mapped[int] = mapped_column(Integer)
    content_key: Mapped[str] = mapped_column(String(64))
    evaluation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # the session-scope review queue whose judge gave it (None: an online evaluator)
    queue_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- people of the web UI (issue #18) -------------------------------------------------------------
class User(Base):
    """A person who signs in to the web UI. Only the argon2 hash of the password is stored."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(100), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ProjectMember(Base):
    """A user's membership of a project (role `member` or `admin`)."""

    __tablename__ = "project_members"
    __table_args__ = (UniqueConstraint("project_id", "user_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20), default="member")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class UiSession(Base):
    """A signed-in browser: the cookie holds a random token, the table only its SHA-256."""

    __tablename__ = "ui_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewLock(Base):
    """A queue item held by one reviewer until `expires_at`, so two people do not label it at once."""

    __tablename__ = "review_locks"
    __table_args__ = (
        UniqueConstraint("project_id", "queue_id", "trace_id"),
        ForeignKeyConstraint(
            ["project_id", "queue_id"],
            ["review_queues.project_id", "review_queues.id"],
            ondelete="CASCADE",
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(Integer, index=True)
    queue_id: Mapped[int] = mapped_column(Integer)
    trace_id: Mapped[str] = mapped_column(String(36))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RagPipeline(Base):
    """An HTTP endpoint a cohort can use instead of a model: POST {"question"} -> {"answer",
    "contexts"}. Registered per project by name; experiments call it from the worker."""

    __tablename__ = "rag_pipelines"
    __table_args__ = (UniqueConstraint("project_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(2000))
    timeout_s: Mapped[float] = mapped_column(Float, default=60.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- the dashboard's rollups of logged traces (issue #41, part 5) -------------------------------------
class TraceRollup(Base):
    """Per project, UTC hour (of the traces' `created_at`) and model ('' for none): how many
    traces, failed ones, token and cost sums. Kept by ingest, edits and retention as deltas
    (`storage/rollups.py`), so the dashboard reads a few rows an hour instead of every trace."""

    __tablename__ = "trace_rollups"
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    hour: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    traces: Mapped[int] = mapped_column(BigInteger, default=0)
    errors: Mapped[int] = mapped_column(BigInteger, default=0)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)
    with_cost: Mapped[int] = mapped_column(BigInteger, default=0)


class TraceLatencyBin(Base):
    """Per project and UTC hour, how many traces' latencies fall in one logarithmic bin
    (`storage/rollups.latency_bin`): the histogram the dashboard's percentiles are read from."""

    __tablename__ = "trace_latency_bins"
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    hour: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    bin: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int] = mapped_column(BigInteger, default=0)


__all__ = [
    "ApiKey",
    "Base",
    "Criteria",
    "Dataset",
    "DatasetVersion",
    "Example",
    "Experiment",
    "ExperimentCohort",
    "Job",
    "LoggedTrace",
    "OnlineEvaluation",
    "OnlineEvaluator",
    "Project",
    "ProjectMember",
    "RagPipeline",
    "ReviewLock",
    "ReviewQueue",
    "ReviewQueueItem",
    "Score",
    "Task",
    "Trace",
    "TraceLabel",
    "TraceLatencyBin",
    "TraceRevision",
    "TraceRollup",
    "TraceScore",
    "UiSession",
    "User",
    "utcnow",
]
