"""The storage layer's project filter: every repository function the routes, pages and jobs ask
instead of querying themselves finds nothing of another project, and refuses to change it."""

from __future__ import annotations

import pytest

from assay.platform.server.api.resources import _criteria_values
from assay.platform.server.auth import keys, users
from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.bodies import CriteriaIn
from assay.platform.server.schemas.traces import QueueIn, TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.access import KeyRepo, MemberRepo
from assay.platform.server.storage.db import make_engine, migrate, session_factory
from assay.platform.server.storage.pipelines import PipelineRepo
from assay.platform.server.storage.repos import CriteriaRepo
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.review_locks import Locks
from assay.platform.server.storage.traces import TraceRepo

TRACE = "6f1f2b9e-4a53-4d5c-9f0e-2f6b1f0c7a11"


@pytest.fixture
def two_projects(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'repos.sqlite'}")
    migrate(engine)
    sessions = session_factory(engine)
    with sessions() as session:
        a, b = keys.project(session, "A"), keys.project(session, "B")
        session.flush()
        user = users.create_user(session, "alice", "a long password 1", projects=["A"])
        _key, key_row = keys.create_key(session, b"pepper", project_name="A", scopes=["read"])
        traces = TraceRepo(session, a.id)
        traces.ingest([TraceIn(id=TRACE, input="q", output="a")])
        traces.add_label(TRACE, criterion="ok", value=True, author="alice")
        traces.add_scores(
            [{"trace_id": TRACE, "criterion": "ok", "value": 1.0, "source": "s", "outcome": {}}]
        )
        criteria = CriteriaIn(
            name="crit", criteria_type="function", match_type="contains", match_pattern="a"
        )
        CriteriaRepo(session, a.id).create(_criteria_values(criteria))
        queue = QueueRepo(session, a.id).create(QueueIn(name="queue", condition="").model_dump())
        PipelineRepo(session, a.id).add(name="pipe", url="http://127.0.0.1:9/", timeout_s=5.0)
        Locks(session, a.id).acquire(queue.id, TRACE, user.id)
        session.commit()
        ids = {"a": a.id, "b": b.id, "queue": queue.id, "user": user.id, "key": key_row.key_id}
    yield sessions, ids
    engine.dispose()


def test_project_a_sees_its_own_rows(two_projects):
    """The fixture is not empty: A's repositories find what B's must not."""
    sessions, ids = two_projects
    with sessions() as session:
        traces = TraceRepo(session, ids["a"])
        assert traces.count() == 1 and traces.existing_ids({TRACE}) == {TRACE}
        assert len(traces.score_history(TRACE)) == 1 and len(traces.label_history(TRACE)) == 1
        assert set(traces.locked_by_id([TRACE])) == {TRACE} and traces.score_keys([TRACE])
        queues = QueueRepo(session, ids["a"])
        assert queues.names_by_id() == {ids["queue"]: "queue"}
        assert queues.find_by_id(ids["queue"]) is not None
        assert CriteriaRepo(session, ids["a"]).by_names(["crit"])
        assert [p.name for p in PipelineRepo(session, ids["a"]).all()] == ["pipe"]
        assert MemberRepo(session, ids["a"]).membership(ids["user"]) is not None
        assert KeyRepo(session, ids["a"]).owns(ids["key"])


def test_project_b_finds_nothing_of_project_a(two_projects):
    sessions, ids = two_projects
    with sessions() as session:
        traces = TraceRepo(session, ids["b"])
        assert traces.count() == 0
        assert traces.existing_ids({TRACE}) == set()
        assert traces.score_history(TRACE) == [] and traces.label_history(TRACE) == []
        assert traces.locked_by_id([TRACE]) == {} and traces.score_keys([TRACE]) == set()
        queues = QueueRepo(session, ids["b"])
        assert queues.names_by_id() == {} and queues.find_by_id(ids["queue"]) is None
        assert queues.judging_chunk(ids["queue"], 0, 10) == ([], 0)
        assert queues.judged(ids["queue"], [TRACE]) == set()
        assert CriteriaRepo(session, ids["b"]).by_names(["crit"]) == []
        pipelines = PipelineRepo(session, ids["b"])
        assert pipelines.all() == [] and pipelines.by_name("pipe") is None
        locks = Locks(session, ids["b"])
        assert locks.holder(ids["queue"], TRACE) is None
        assert locks.next_free_item(ids["queue"], ids["user"], 0) is None
        members = MemberRepo(session, ids["b"])
        assert members.members() == [] and members.membership(ids["user"]) is None
        assert not KeyRepo(session, ids["b"]).owns(ids["key"])


def test_project_b_cannot_change_project_a(two_projects):
    sessions, ids = two_projects
    with sessions() as session:
        with pytest.raises(ApiError) as refused:
            PipelineRepo(session, ids["b"]).delete("pipe")
        assert refused.value.status == 404
        with pytest.raises(ApiError):
            PipelineRepo(session, ids["b"]).check_cohort("pipe", "cohorts[0].rag_pipeline")
        assert MemberRepo(session, ids["b"]).remove(ids["user"]) is False
        Locks(session, ids["b"]).release(ids["queue"], TRACE, ids["user"])
        session.commit()
    with sessions() as session:
        assert PipelineRepo(session, ids["a"]).by_name("pipe") is not None
        assert MemberRepo(session, ids["a"]).membership(ids["user"]) is not None
        assert Locks(session, ids["a"]).holder(ids["queue"], TRACE) is not None
        assert session.query(models.ReviewLock).count() == 1


def test_a_repository_needs_a_project():
    with pytest.raises(TypeError):
        TraceRepo(object(), None)  # type: ignore[arg-type]
