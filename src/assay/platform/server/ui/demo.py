"""`assay serve --demo`: a demo project to look at before sending anything — a dataset, a finished
experiment of two cohorts (its answers and scores written directly, as a worker would have stored
them; no model is called), logged traces with judge scores, a review queue holding some of
them, and two weeks of a support bot's traffic for the dashboard (`demo_traffic.py`). Seeding
runs once per database; every start gives the `demo` user a new password.

The demo never touches what is not the demo: a project named `demo` that this module did not seed
(someone's real project) is left alone and the demo is seeded as `demo-2` (or the next free
name), and a user named `demo` who belongs to such a project keeps their password: the demo's
user is then `demo-2`. `seed_demo_sign_in` says which names it used and why."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select

from assay.platform import criteria_rules
from assay.platform.server.auth import users
from assay.platform.server.auth.keys import project
from assay.platform.server.schemas.traces import TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.demo_names import (
    DEMO_DATASET,
    DEMO_PROJECT,
    DEMO_USER,
    demo_project_name,
    demo_user_name,
    is_demo,
)
from assay.platform.server.storage.repos import CriteriaRepo, DatasetRepo, TaskRepo
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.traces import TraceRepo
from assay.platform.server.ui.demo_traffic import seed_traffic

# (question, reference answer, context)
CAPITALS = [
    ("What is the capital of France?", "Paris", "Paris is the capital and largest city of France."),
    ("What is the capital of Japan?", "Tokyo", "Tokyo has been Japan's capital since 1869."),
    (
        "What is the capital of Canada?",
        "Ottawa",
        "Ottawa, on the Ottawa River, is Canada's capital.",
    ),
    ("What is the capital of Australia?", "Canberra", "Canberra was chosen as a compromise."),
    ("What is the capital of Brazil?", "Brasília", "Brasília replaced Rio de Janeiro in 1960."),
    ("What is the capital of Kenya?", "Nairobi", "Nairobi is Kenya's capital and largest city."),
]
# per cohort, its answer to each question and the judge's Relevance (1-5) and Correct (0/1)
COHORTS = {
    "careful": [
        ("Paris.", 5, 1),
        ("Tokyo.", 5, 1),
        ("Ottawa.", 5, 1),
        ("Canberra, not Sydney.", 5, 1),
        ("Brasília.", 4, 1),
        ("Nairobi.", 5, 1),
    ],
    "terse": [
        ("Paris", 4, 1),
        ("Kyoto", 2, 0),
        ("Toronto", 2, 0),
        ("Sydney", 2, 0),
        ("Brasília", 4, 1),
        ("Nairobi", 4, 1),
    ],
}
SUPPORT_TRACES = [
    ("How do I reset my password?", "Click 'Forgot password' on the sign-in page.", 5),
    ("Can I export my data as CSV?", "Yes: Settings → Export → CSV.", 4),
    ("Why was I charged twice?", "I am not sure; maybe try again later.", 2),
    ("Do you support SSO?", "We support SAML and OIDC single sign-on on the Team plan.", 5),
    ("How do I delete my account?", "Accounts cannot be deleted.", 1),
]


def _criteria() -> list[dict[str, Any]]:
    relevance = {
        "name": "Relevance",
        "criteria_type": "llm_judge",
        "output_type": "5-point",
        "header": "How well does the answer address the question?",
        "likert_score_1": "Off topic",
        "likert_score_2": "Mostly off",
        "likert_score_3": "Partly answers",
        "likert_score_4": "Answers it",
        "likert_score_5": "Answers it fully and precisely",
    }
    correct = {
        "name": "Correct",
        "criteria_type": "llm_judge",
        "output_type": "bool",
        "header": "Is the answer factually correct?",
        "bool_true": "Correct",
        "bool_false": "Wrong",
    }
    return [criteria_rules.check(relevance), criteria_rules.check(correct)]


def seed(session: Any, name: str = DEMO_PROJECT) -> int:
    """The demo project `name` (created once); returns its id. A project of that name that is
    not the demo is refused (`ValueError`): the demo is never seeded into a real project."""
    found = session.scalar(select(models.Project).where(models.Project.name == name))
    if found is not None:
        if not is_demo(session, found.id):
            raise ValueError(f"project {name!r} exists and is not the demo: it is left alone")
        return found.id
    owner = project(session, name)
    pid = owner.id
    criteria_repo = CriteriaRepo(session, pid)
    criteria = [criteria_repo.create(values) for values in _criteria()]
    examples = [
        {"question": q, "ground_truth_context": [c], "ground_truth_answer": a}
        for q, a, c in CAPITALS
    ]
    dataset, version = DatasetRepo(session, pid).create(
        {
            "name": DEMO_DATASET[0],
            "source_type": DEMO_DATASET[1],
            "source_file": "",
            "examples": examples,
        }
    )
    task = TaskRepo(session, pid).create(
        {"name": "answer", "generator_model": "demo/model", "system_prompt": "Answer briefly."}
    )
    _experiment(session, pid, dataset, version, task, criteria)
    seed_traffic(session, pid)  # first: the five support traces below stay the newest
    _traces(session, pid)
    return pid


def _experiment(
    session: Any, pid: int, dataset: Any, version: Any, task: Any, criteria: Any
) -> None:
    now = datetime.now(timezone.utc)
    snapshots = [
        {"key": key, "id": c.id, **{f: getattr(c, f) for f in criteria_rules.FIELDS}}
        for key, c in enumerate(criteria)
    ]
    experiment = models.Experiment(
        project_id=pid,
        name="careful vs terse",
        dataset_id=dataset.id,
        dataset_version_id=version.id,
        dataset_version=version.version,
        task={
            "id": task.id,
            "name": task.name,
            "generator_model": task.generator_model,
            "system_prompt": task.system_prompt,
        },
        criteria=snapshots,
        judge_model="demo/judge",
        status="completed",
        started_at=now - timedelta(minutes=3),
        finished_at=now - timedelta(minutes=1),
    )
    session.add(experiment)
    session.flush()
    stored = DatasetRepo(session, pid).all_examples(version)
    for position, (name, answers) in enumerate(COHORTS.items()):
        cohort = models.ExperimentCohort(
            project_id=pid,
            experiment_id=experiment.id,
            position=position,
            name=name,
            generator_model=f"demo/{name}",
        )
        session.add(cohort)
        session.flush()
        for example, (answer, relevance, correct) in zip(stored, answers, strict=True):
            seeded = example.ground_truth_context  # a list of passages (EXAMPLES above)
            passages = list(seeded) if isinstance(seeded, list) else [str(seeded)]
            trace = models.Trace(
                project_id=pid,
                experiment_id=experiment.id,
                cohort_id=cohort.id,
                example_id=example.id,
                input=example.question,
                output=answer,
                contexts=passages,
                raw_input={
                    "model": f"demo/{name}",
                    "messages": [{"role": "user", "content": example.question}],
                },
                raw_output={"content": answer},
                meta={"cohort": name, "source": "demo"},
                model=f"demo/{name}",
                input_tokens=20,
                output_tokens=4,
                latency_ms=300.0,
            )
            session.add(trace)
            session.flush()
            for key, (criterion, value) in enumerate(
                ((criteria[0], float(relevance)), (criteria[1], float(correct)))
            ):
                session.add(
                    models.Score(
                        project_id=pid,
                        experiment_id=experiment.id,
                        trace_id=trace.id,
                        criteria_key=key,
                        criteria_name=criterion.name,
                        source="judge",
                        status="ok",
                        value=value,
                        reason="demo score",
                    )
                )
    session.flush()


def _traces(session: Any, pid: int) -> None:
    now = datetime.now(timezone.utc)
    traces = []
    for index, (question, answer, _score) in enumerate(SUPPORT_TRACES):
        started = now - timedelta(minutes=30 - index)
        traces.append(
            TraceIn.model_validate(
                {
                    "id": str(uuid.uuid4()),
                    "created_at": started.isoformat(),
                    "input": question,
                    "output": answer,
                    "contexts": ["Help centre: account, billing and export articles."],
                    "metadata": {
                        "channel": "chat",
                        "user": {"tier": "pro" if index % 2 else "free"},
                        # two conversations: the sessions pages and their screenshot
                        "session_id": "chat-ada" if index < 3 else "chat-ben",
                    },
                    "model": "demo/support-bot",
                    "usage": {"input_tokens": 120, "output_tokens": 18},
                    "latency_ms": 640.0 + 10 * index,
                    "tags": ["support"],
                    "spans": [
                        {
                            "id": "s1",
                            "name": "answer",
                            "kind": "function",
                            "started_at": started.isoformat(),
                            "ended_at": (started + timedelta(milliseconds=640)).isoformat(),
                        },
                        {
                            "id": "s2",
                            "parent_id": "s1",
                            "name": "search help centre",
                            "kind": "retrieval",
                            "started_at": started.isoformat(),
                            "ended_at": (started + timedelta(milliseconds=120)).isoformat(),
                            "output": ["Help centre: account, billing and export articles."],
                        },
                        {
                            "id": "s3",
                            "parent_id": "s1",
                            "name": "chat completion",
                            "kind": "llm",
                            "started_at": (started + timedelta(milliseconds=130)).isoformat(),
                            "ended_at": (started + timedelta(milliseconds=630)).isoformat(),
                            "input": [{"role": "user", "content": question}],
                            "output": answer,
                        },
                    ],
                }
            )
        )
    repo = TraceRepo(session, pid)
    stored, _duplicates = repo.ingest(traces)
    repo.add_scores(
        [
            {
                "trace_id": trace.id,
                "criterion": "Relevance",
                "value": float(score),
                "outcome": {
                    "status": "ok",
                    "value": float(score),
                    "reason": "the judge's demo reason",
                },
                "source": "judge:demo/judge",
                "queue_id": None,
            }
            for trace, (_q, _a, score) in zip(traces, SUPPORT_TRACES, strict=True)
        ]
    )
    QueueRepo(session, pid).create(
        {
            "name": "support answers",
            "condition": "'support' IN tags",
            "criteria": ["Relevance", "Correct"],
            "judge_model": None,
            "dataset": None,
        }
    )
    assert stored


@dataclass(frozen=True)
class DemoSignIn:
    """Where the demo is and how to sign in to it; `note` says why a name is not the usual one."""

    project: str
    username: str
    password: str
    note: str | None = None


def seed_demo_sign_in(state: Any) -> DemoSignIn:
    """Seed the demo (once) and give its user a fresh password, both under names that are the
    demo's own (see the module's docstring)."""
    password = secrets.token_urlsafe(9)
    with state.transaction() as session:
        name = demo_project_name(session)
        pid = seed(session, name)
        username = demo_user_name(session)
        user = session.scalar(select(models.User).where(models.User.username == username))
        if user is None:
            user = users.create_user(
                session, username, password, projects=[name], display_name="Demo reviewer"
            )
        else:
            user.password_hash = users.hash_password(password)
        users.add_member(session, user, name, "admin")
        assert pid
    notes = []
    if name != DEMO_PROJECT:
        notes.append(f"a project named {DEMO_PROJECT!r} exists and is not the demo (left alone)")
    if username != DEMO_USER:
        notes.append(f"a user named {DEMO_USER!r} belongs to other projects (left alone)")
    note = (
        "; ".join(notes) + f": the demo is project {name!r}, user {username!r}" if notes else None
    )
    return DemoSignIn(name, username, password, note)


def seed_demo(state: Any) -> str:
    """Seed (once) and give the demo user a fresh password; returns that password."""
    return seed_demo_sign_in(state).password


__all__ = [
    "DEMO_PROJECT",
    "DEMO_USER",
    "DemoSignIn",
    "is_demo",
    "seed",
    "seed_demo",
    "seed_demo_sign_in",
]
