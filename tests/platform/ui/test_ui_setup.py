"""`assay users add` and the demo project of `assay serve --demo`."""

from __future__ import annotations

import httpx
from sqlalchemy import select
from typer.testing import CliRunner

from assay.cli.app import app as cli
from assay.platform.server.storage import models
from tests.platform.ui.conftest import csrf_in


def test_users_add_creates_a_member_who_can_sign_in(live, tmp_path):
    project = live.new_project()
    runner = CliRunner()
    done = runner.invoke(
        cli,
        [
            "users",
            "add",
            "grace",
            "--db",
            live.db_url,
            "--project",
            project,
            "--role",
            "admin",
            "--name",
            "Grace H",
            "--password-stdin",
        ],
        input="correct horse battery\n",
    )
    assert done.exit_code == 0, done.output
    again = runner.invoke(
        cli, ["users", "add", "grace", "--db", live.db_url, "--password-stdin"], input="x" * 12
    )
    assert again.exit_code != 0 and "already exists" in str(again.exception)
    short = runner.invoke(
        cli, ["users", "add", "linus", "--db", live.db_url, "--password-stdin"], input="short\n"
    )
    assert short.exit_code != 0 and "at least 8 characters" in str(short.exception)
    with live.app.state.assay.transaction() as session:
        user = session.scalar(select(models.User).where(models.User.username == "grace"))
        role = session.scalar(
            select(models.ProjectMember.role).where(models.ProjectMember.user_id == user.id)
        )
    assert user.display_name == "Grace H" and role == "admin"
    listed = runner.invoke(cli, ["users", "list", "--db", live.db_url])
    assert listed.exit_code == 0
    (line,) = [row for row in listed.output.splitlines() if row.startswith("grace ")]
    assert f"{project} (admin)" in line and "Grace H" in line and "argon2" not in listed.output
    assert "correct horse" not in user.password_hash
    client = httpx.Client(base_url=live.base_url, timeout=30, headers={"Origin": live.base_url})
    token = csrf_in(client.get("/ui/login").text)
    answer = client.post(
        "/ui/login",
        data={"csrf_token": token, "username": "grace", "password": "correct horse battery"},
        follow_redirects=True,
    )
    assert answer.status_code == 200 and "Grace H" in answer.text and project in answer.text


def test_the_demo_project_holds_a_finished_experiment_and_a_queue(tmp_path):
    from assay.platform.server.app import create_app
    from assay.platform.server.auth.users import verify_login
    from assay.platform.server.storage.experiments import ExperimentRepo
    from assay.platform.server.storage.review import QueueRepo
    from assay.platform.server.ui.demo import DEMO_PROJECT, seed_demo

    app = create_app(f"sqlite:///{tmp_path / 'demo.sqlite'}")
    state = app.state.assay
    first = seed_demo(state)
    second = seed_demo(state)  # seeding again adds nothing; the password changes
    try:
        with state.transaction() as session:
            assert verify_login(session, "demo", first) is None
            assert verify_login(session, "demo", second) is not None
            project = session.scalar(
                select(models.Project).where(models.Project.name == DEMO_PROJECT)
            )
            repo = ExperimentRepo(session, project.id)
            (experiment,) = repo.list(name=None, limit=10, cursor=None)[0]
            summary = repo.summary(experiment)["summary"]
            assert repo.progress(experiment)["percent"] == 100.0
            queues = QueueRepo(session, project.id)
            (queue,) = queues.list(limit=10, cursor=None)[0]
            assert queues.counts(queue) == {"pending": 5}
            assert (
                session.scalar(
                    select(models.Dataset.name).where(models.Dataset.project_id == project.id)
                )
                == "capitals"
            )
        means = {(s["cohort"], s["criterion"]): s["mean"] for s in summary}
        assert means[("careful", "Correct")] == 1.0
        assert round(means[("terse", "Correct")], 6) == 0.5
        assert all(s["coverage"] == 1.0 for s in summary)
    finally:
        state.engine.dispose()
