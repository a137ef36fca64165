"""Issue #41's smaller defects, each against a live server (SQLite and PostgreSQL) or its app: a
judge's value on the review page in its criterion's words, the criterion form's groups marked by
type (the script shows the chosen one's), and `--demo` never touching a real `demo` project or
a real `demo` user."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from assay.platform.server.storage import models

from .conftest import five_point_criterion, ingest, make_user, sign_in


def test_the_review_page_shows_the_judges_value_in_the_criterions_words(live):
    user = make_user(live)
    five_point_criterion(user)  # "Helpfulness", levels "level 1" ... "level 5"
    (trace_id,) = ingest(user, {"input": "a question", "output": "an answer"})
    scored = user.api().post(
        f"/traces/{trace_id}/scores", json={"criterion": "Helpfulness", "value": 5}
    )
    assert scored.status_code in (200, 201), scored.text
    queue = user.api().post(
        "/review-queues", json={"name": "q", "condition": "", "criteria": ["Helpfulness"]}
    )
    assert queue.status_code == 201, queue.text
    page = sign_in(user).get(f"{user.base}/queues/{queue.json()['id']}/items/{trace_id}")
    assert page.status_code == 200
    judge = re.search(r'data-judge="Helpfulness">Judge: <strong>([^<]*)</strong>', page.text)
    assert judge is not None and judge.group(1) == "level 5 (5)"  # not "5.0"


def test_the_criterion_form_marks_each_group_with_its_type(live):
    user = make_user(live)
    html = sign_in(user).get(f"{user.base}/criteria/new").text
    start = html.index('id="object-form"')
    form = html[start : html.index("</form>", start)]
    assert "data-criterion-form" in form
    groups = dict(
        re.findall(r'<fieldset data-types="([^"]+)"[^>]*><legend>([^<]+)</legend>', form)[::-1]
    )
    assert groups["function"].startswith("Function criteria")
    assert re.search(r'data-types="llm_judge" data-outputs="5-point"><legend>5-point', form)
    assert re.search(r'data-types="llm_judge" data-outputs="bool"><legend>Yes / no', form)
    assert re.search(r'data-types="llm_judge" data-outputs="prompt">.*name="prompt"', form, re.S)
    assert '<label data-types="llm_judge">Output' in form  # a function criterion has no output
    # every field still in the form (no script: all show, each group named by its type)
    for name in ("header", "likert_score_5", "bool_true", "match_pattern", "prompt"):
        assert f'name="{name}"' in form
    script = sign_in(user).get("/ui/static/assay-ui.js").text
    assert "data-criterion-form" in script and "group.hidden" in script


@pytest.mark.slow  # seeds the demo (two weeks of traffic) twice: 7 s
def test_demo_leaves_a_real_demo_project_and_user_alone(tmp_path):
    from assay.platform.server.app import create_app
    from assay.platform.server.auth import users
    from assay.platform.server.storage.demo_names import is_demo
    from assay.platform.server.storage.repos import DatasetRepo
    from assay.platform.server.ui.demo import seed, seed_demo_sign_in

    app = create_app(f"sqlite:///{tmp_path / 'demo.sqlite'}")
    state = app.state.assay
    try:
        with state.transaction() as session:  # someone's own project and account named demo
            users.create_user(session, "demo", "their own password 1", projects=["demo"])
            mine = session.scalar(select(models.Project.id).where(models.Project.name == "demo"))
            DatasetRepo(session, mine).create(
                {"name": "mine", "source_type": "", "source_file": "", "examples": []}
            )
        shown = seed_demo_sign_in(state)
        assert (shown.project, shown.username) == ("demo-2", "demo-2")
        assert shown.note is not None and "'demo' exists and is not the demo" in shown.note
        again = seed_demo_sign_in(state)  # the demo is found again, not seeded a third time
        assert (again.project, again.username, again.note) == ("demo-2", "demo-2", shown.note)
        with state.transaction() as session:
            assert users.verify_login(session, "demo", "their own password 1") is not None
            assert users.verify_login(session, "demo-2", again.password) is not None
            demo2 = session.scalar(select(models.Project.id).where(models.Project.name == "demo-2"))
            assert is_demo(session, demo2) and not is_demo(session, mine)
            # the real project has gained nothing: no new member, no demo objects
            members = session.scalars(
                select(models.ProjectMember.user_id).where(models.ProjectMember.project_id == mine)
            ).all()
            assert len(members) == 1
            names = session.scalars(
                select(models.Dataset.name).where(models.Dataset.project_id == mine)
            ).all()
            assert names == ["mine"]
            assert (
                session.scalar(
                    select(models.Experiment.id).where(models.Experiment.project_id == mine)
                )
                is None
            )
            with pytest.raises(ValueError, match="'demo' exists and is not the demo"):
                seed(session, "demo")
    finally:
        state.engine.dispose()


@pytest.mark.slow  # a browser
def test_the_criterion_form_shows_only_the_chosen_types_fields(ui_live, browser):
    from .conftest import browser_sign_in

    user = make_user(ui_live)
    page = browser_sign_in(browser, user)
    page.goto(f"{user.base}/criteria/new")
    scale, yes_no = (
        page.locator("fieldset", has_text="5-point scale"),
        page.locator("fieldset", has_text="Yes / no"),
    )
    function, prompt = (
        page.locator("fieldset", has_text="Function criteria"),
        page.locator("textarea[name=prompt]"),
    )
    assert scale.is_visible() and not yes_no.is_visible() and not function.is_visible()
    assert not prompt.is_visible() and page.locator("textarea[name=header]").is_visible()
    page.select_option("select[name=output_type]", "bool")
    assert yes_no.is_visible() and not scale.is_visible()
    page.select_option("select[name=output_type]", "prompt")
    assert prompt.is_visible() and not page.locator("textarea[name=header]").is_visible()
    page.select_option("select[name=criteria_type]", "function")
    assert function.is_visible() and not yes_no.is_visible() and not prompt.is_visible()
    assert not page.locator("select[name=output_type]").is_visible()
    # a function criterion saves from the fields it shows
    page.fill("input[name=name]", "Says Paris")
    page.fill("input[name=match_pattern]", "Paris")
    page.select_option("select[name=match_type]", "contains")
    page.click("form#object-form button[type=submit]")
    page.wait_for_load_state()
    saved = user.api().get("/criteria").json()["items"]
    assert [(c["name"], c["criteria_type"]) for c in saved] == [("Says Paris", "function")]
    page.context.close()


@pytest.mark.slow  # assay serve in a process of its own, seeding the demo: 10 s
def test_assay_serve_demo_beside_a_real_demo_project_says_where_the_demo_is(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx

    from assay.platform.server.auth.admin import create_key

    from ..conftest import free_port

    db = f"sqlite:///{tmp_path / 'serve.sqlite'}"
    create_key(db, project="demo")  # someone's project named demo
    port = free_port()
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "60"}
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--demo", "--port", str(port), "--db", db],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=30)
    lines = err.splitlines()
    assert lines[0] == (
        "demo: a project named 'demo' exists and is not the demo (left alone): the demo is "
        "project 'demo-2', user 'demo'"
    )
    ready = re.fullmatch(
        rf"demo project 'demo-2' ready: sign in at http://127\.0\.0\.1:{port}/ui/ as demo / (\S+)",
        lines[1],
    )
    assert ready is not None, lines[:3]  # one line, however narrow the terminal
    from sqlalchemy.orm import Session

    from assay.platform.server.auth import users
    from assay.platform.server.storage.db import make_engine

    engine = make_engine(db)
    try:
        with Session(engine) as session:
            assert users.verify_login(session, "demo", ready.group(1)) is not None
            demo = session.scalar(select(models.Project.id).where(models.Project.name == "demo"))
            assert (
                session.scalar(
                    select(models.ProjectMember.id).where(models.ProjectMember.project_id == demo)
                )
                is None
            )  # the demo's user was not made a member of the real project
    finally:
        engine.dispose()
