"""The experiment pages in a real browser (Playwright driving Debian's chromium against a live
uvicorn on 127.0.0.1): an experiment started from the New experiment form (a refused model named
beside its field with everything typed kept, a cohort added, then started and followed to its
generations in the traces table), and the demo's compare page at 1280 and 390 px (a chart per
criterion on its own scale, no request leaving 127.0.0.1, no script error, nothing off the page at
390 px, a row opening its trace)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.platform.test_experiments import behaviour
from tests.platform.ui.conftest import browser_sign_in, make_user

pytestmark = pytest.mark.slow  # a browser and a running experiment: several seconds


def _objects(user: Any, fake: Any) -> dict[str, Any]:
    api = user.api()
    dataset = api.post(
        "/datasets",
        json={
            "name": "capitals (browser)",
            "examples": [
                {"question": f"What is the capital of {c}? (form)"}
                for c in ("France", "Italy", "Japan")
            ],
        },
    ).json()
    task = api.post(
        "/tasks", json={"name": "qa (browser)", "generator_model": fake.model_string("gen-t")}
    ).json()
    criterion = api.post(
        "/criteria",
        json={
            "name": "Names a capital",
            "criteria_type": "function",
            "function_name": "string_match",
            "output_type": "bool",
            "match_type": "regex_match",
            "match_pattern": "paris|rome|tokyo",
        },
    ).json()
    return {"dataset": dataset, "task": task, "criterion": criterion}


def test_an_experiment_started_from_the_form(ui_live, browser, fake, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # so `gpt-4o` can never work here
    fake.default = behaviour()
    user = make_user(ui_live)
    made = _objects(user, fake)
    page = browser_sign_in(browser, user, viewport={"width": 1280, "height": 900})
    page.goto(f"{user.base}/experiments")
    with page.expect_navigation():
        page.click("#new-experiment")
    page.fill("input[name=name]", "started in the browser")
    page.select_option("select[name=dataset_id]", str(made["dataset"]["id"]))
    page.select_option("select[name=task_id]", str(made["task"]["id"]))
    page.check(f"input[name=criteria_ids][value='{made['criterion']['id']}']")
    page.fill("input[name='cohorts[0].name']", "smart")
    page.fill("input[name='cohorts[0].generator_model']", "gpt-4o")
    page.fill("textarea[name='cohorts[0].system_prompt']", "You are smart.")
    with page.expect_navigation():
        page.click("#add-cohort")
    assert page.locator("[data-cohort-row]").count() == 3
    assert page.input_value("input[name='cohorts[0].name']") == "smart"
    page.fill("input[name='cohorts[1].name']", "plain")
    page.fill("input[name='cohorts[1].generator_model']", fake.model_string("gen-p"))
    with page.expect_navigation():
        page.click("#start")
    problem = page.locator("label:has(input[name='cohorts[0].generator_model']) .problem")
    assert "OPENAI_API_KEY" in problem.text_content()
    assert page.locator(".problem[data-problem]").count() == 1
    for selector, value in (
        ("input[name=name]", "started in the browser"),
        ("input[name='cohorts[0].generator_model']", "gpt-4o"),
        ("textarea[name='cohorts[0].system_prompt']", "You are smart."),
        ("input[name='cohorts[1].name']", "plain"),
    ):
        assert page.input_value(selector) == value, selector
    assert page.is_checked(f"input[name=criteria_ids][value='{made['criterion']['id']}']")
    assert user.api().get("/experiments").json()["items"] == []

    page.fill("input[name='cohorts[0].generator_model']", fake.model_string("gen-s"))
    with page.expect_navigation():
        page.click("#start")
    assert re.search(r"/experiments/\d+$", page.url)
    page.wait_for_selector("#status[data-status=completed]", timeout=60_000)
    with page.expect_navigation():
        page.click("#generation-links a[data-cohort-traces=smart]")
    assert "/traces?" in page.url
    assert page.locator("#traces tbody tr").count() == 3
    with page.expect_navigation():
        page.click("#traces tbody tr a")
    assert "The capital is" in page.text_content("#trace-output")
    page.context.close()


@pytest.fixture
def demo_experiment(ui_live):
    """The demo's experiment (careful vs terse, written as a worker would store it) in a project of
    its own, so opening its traces here changes nothing the demo project's tests see."""
    from assay.platform.server.storage.repos import CriteriaRepo, DatasetRepo, TaskRepo
    from assay.platform.server.ui import demo

    user = make_user(ui_live)
    with ui_live.app.state.assay.transaction() as session:
        pid = user.project_id
        criteria = [CriteriaRepo(session, pid).create(c) for c in demo._criteria()]
        examples = [
            {"question": q, "ground_truth_context": [c], "ground_truth_answer": a}
            for q, a, c in demo.CAPITALS
        ]
        dataset, version = DatasetRepo(session, pid).create(
            {"name": "capitals", "source_type": "test", "source_file": "", "examples": examples}
        )
        task = TaskRepo(session, pid).create(
            {"name": "answer", "generator_model": "demo/model", "system_prompt": ""}
        )
        demo._experiment(session, pid, dataset, version, task, criteria)
    return user


@pytest.mark.parametrize("width", [1280, 390])
def test_the_demo_compare_page(ui_live, browser, demo_experiment, width, tmp_path):
    user = demo_experiment
    page = browser_sign_in(browser, user, viewport={"width": width, "height": 860})
    seen: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{user.base}/experiments")
    with page.expect_navigation():
        page.click("#experiments a:text('compare')")
    page.wait_for_selector("#charts svg[role=img]")
    scales = {
        f.get_attribute("data-criterion"): f.locator(".legend").text_content()
        for f in page.locator("#charts figure").all()
    }
    assert "scale 1–5" in scales["Relevance"] and "scale 0–1" in scales["Correct"]
    assert page.locator("#charts rect.mean-bar").count() == 4
    assert page.locator("#charts g.whisker").count() == 4
    terse = page.locator("#compare-table td[data-cohort=terse][data-criterion=Correct]")
    assert "Δ -0.500" in terse.locator("[data-delta]").text_content()
    if width == 390:
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 390, f"the page is {wide} px wide at 390 px"
        for chart in page.locator("#charts figure").all():
            box = chart.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.screenshot(path=str(tmp_path / f"compare-{width}.png"), full_page=True)
    if width == 390:  # the experiment's page and the form fit too
        here = page.url.split("/compare")[0]
        for path in (here, here.rsplit("/", 1)[0] + "/new"):
            page.goto(path)
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= 390, f"{path} is {wide} px wide at 390 px"
        page.goto(here + "/compare")
    with page.expect_navigation():
        page.locator("#items a[data-trace-link=terse]").nth(1).click()
    page.wait_for_selector("#waterfall")
    assert page.text_content("#trace-output").strip() == "Kyoto"
    assert all(url.startswith(ui_live.base_url) for url in seen), seen
    assert problems == []
    page.context.close()
