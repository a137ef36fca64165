"""One function-criterion implementation for experiments and review queues
(`experiment_judging.function_outcome`), with one error key, `error_message`: the same criterion
gives the same outcome in both, on the real server (SQLite and PostgreSQL); a stored review-queue
error of the older shape (`message`) still reads, in the API and on the trace page."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import select, update

from assay.platform import Cohort, Criteria, Experiment
from assay.platform.server.jobs.judging import function_outcome
from assay.platform.server.storage import models
from assay.platform.server.storage.trace_rows import readable_outcome
from tests.platform.test_experiments import behaviour, seed_objects
from tests.platform.ui.conftest import make_user, sign_in


def criterion(**fields):
    base = {
        "phase": "generation",
        "match_type": "contains",
        "match_pattern": "paris",
        "case_sensitive": False,
    }
    return base | fields


def test_function_outcome_matches_the_answer_or_the_contexts():
    assert function_outcome(criterion(), "Paris.", []) == {
        "status": "ok",
        "value": 1.0,
        "reason": "contains 'paris': matched",
    }
    retrieval = criterion(phase="retrieval")
    assert function_outcome(retrieval, "Paris.", ["Rome is in Italy."])["value"] == 0.0
    assert function_outcome(retrieval, "", ["x", "in Paris"])["value"] == 1.0
    broken = function_outcome(criterion(match_type="regex_match", match_pattern="(a)\\1"), "aa", [])
    assert broken["status"] == "error" and "message" not in broken
    assert "invalid regex" in broken["error_message"] and broken["error_type"]


def test_an_older_stored_error_reads_with_error_message():
    old = {"status": "error", "error_type": "APIError", "message": "down"}
    assert readable_outcome(old) == {
        "status": "error",
        "error_type": "APIError",
        "error_message": "down",
    }
    assert readable_outcome({"status": "ok", "value": 1.0}) == {"status": "ok", "value": 1.0}
    assert readable_outcome(None) == {}


def _break_pattern(live, criteria_id: int) -> None:
    """A pattern RE2 cannot run, as a criterion saved before the RE2 rule would hold it (the
    API refuses it now)."""
    with live.app.state.assay.transaction() as session:
        session.execute(
            update(models.Criteria)
            .where(models.Criteria.id == criteria_id)
            .values(match_type="regex_match", match_pattern="(p)\\1")
        )


def test_experiments_and_review_queues_give_the_same_function_outcome(sdk, live, fake):
    fake.default = behaviour()
    tag = uuid.uuid4().hex[:8]
    dataset, task, _criteria = seed_objects(fake, f"-{tag}")
    check = Criteria(
        name=f"Pattern {tag}",
        phase="generation",
        output_type="bool",
        criteria_type="function",
        function_name="string_match",
        match_type="contains",
        match_pattern="paris",
    )
    check.save()
    _break_pattern(live, check.id)
    results = Experiment(
        name=f"function {tag}",
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="Smart", generator_model=fake.model_string(f"gen-{tag}"))],
        criteria=[check],
        judge_model="",
    ).run(poll_interval=0.05)
    in_experiment = results["rows"][0]["scores"][check.name]
    assert in_experiment["status"] == "error", in_experiment

    key = sdk.login.__globals__["_client"].key
    with live.client(key) as api:
        made = api.post(
            "/review-queues",
            json={"name": "Patterns", "criteria": [check.name], "judge_model": "not/called"},
        )
        assert made.status_code == 201, made.text
        trace_id = str(uuid.uuid4())
        api.post("/traces", json={"traces": [{"id": trace_id, "input": "q", "output": "Paris"}]})
        deadline = time.monotonic() + 30
        while not (scores := api.get(f"/traces/{trace_id}").json()["scores"]):
            assert time.monotonic() < deadline, "the queue's judge stored nothing"
            time.sleep(0.1)
    in_queue = scores[check.name]["outcome"]
    assert in_queue == {
        "status": "error",
        "error_type": in_experiment["error_type"],
        "error_message": in_experiment["message"],  # the experiment results' documented key
    }
    with live.app.state.assay.transaction() as session:
        stored = session.scalar(
            select(models.TraceScore.outcome).where(models.TraceScore.trace_id == trace_id)
        )
    assert "message" not in stored and "invalid regex" in stored["error_message"]


def test_an_older_review_error_shows_on_the_trace_page(live):
    user = make_user(live)
    trace_id = str(uuid.uuid4())
    with user.api() as api:
        api.post("/traces", json={"traces": [{"id": trace_id, "input": "q", "output": "a"}]})
    with live.app.state.assay.transaction() as session:
        project = session.scalar(
            select(models.LoggedTrace.project_id).where(models.LoggedTrace.id == trace_id)
        )
        session.add(
            models.TraceScore(
                project_id=project,
                trace_id=trace_id,
                criterion="Judged",
                value=None,
                outcome={"status": "error", "error_type": "APIError", "message": "judge was down"},
                source="judge:m",
            )
        )
    page = sign_in(user).get(f"{user.base}/traces/{trace_id}")
    assert page.status_code == 200
    assert "error — judge was down" in page.text.split('id="scores"')[1].split("</table>")[0]


def test_a_failure_is_stored_as_the_library_types_it():
    """Jobs turn an exception into a stored outcome through `Error.from_exception` (which takes an
    exception group's first leaf), and an exception without a message still says what it is."""
    from assay.platform.server.jobs.outcome_rows import error_row

    assert error_row(ValueError("the judge said nothing")) == {
        "status": "error",
        "error_type": "ValueError",
        "error_message": "the judge said nothing",
    }
    assert error_row(TimeoutError())["error_message"] == "TimeoutError()"
    bad = function_outcome(criterion(match_type="regex", match_pattern="(unclosed"), "paris", [])
    assert bad["status"] == "error" and bad["error_type"] and bad["error_message"]
