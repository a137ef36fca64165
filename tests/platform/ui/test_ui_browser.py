"""The web UI in a real browser: Playwright driving Debian's chromium (headless) against a live
uvicorn on 127.0.0.1. The reviewer's keyboard, escaping, CSRF and Origin, the condition bar,
live experiment progress, the comparison table against the API, and a dataset edit."""

from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.platform.test_experiments import behaviour
from tests.platform.ui.conftest import (
    browser_sign_in,
    five_point_criterion,
    ingest,
    make_user,
)


def _queue(user, name="inbox", criteria=("Helpfulness",), condition=""):
    answer = user.api().post(
        "/review-queues", json={"name": name, "condition": condition, "criteria": list(criteria)}
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def _labels(user, trace_id):
    return user.api().get(f"/traces/{trace_id}/labels").json()["items"]


def test_keyboard_4_then_enter_labels_but_a_4_typed_in_the_comment_does_not(ui_live, browser):
    user = make_user(ui_live, name=f"ada-{int(time.time() * 1000) % 10**8}")
    five_point_criterion(user)
    ids = ingest(
        user,
        {"input": "What is 2 + 2?", "output": "4", "contexts": ["arithmetic"]},
        {"input": "second question", "output": "second answer"},
        {"input": "third question", "output": "third answer"},
    )
    queue = _queue(user)
    entered = user.api().get(f"/review-queues/{queue['name']}/traces").json()["items"]
    ids = [t["id"] for t in entered]  # the order of entry is the order of review
    page = browser_sign_in(browser, user)
    page.goto(f"{user.base}/queues/{queue['id']}/next")
    item_url = page.url
    assert item_url.endswith(ids[0])
    page.click("#comment")
    page.keyboard.type("4 is right")
    page.keyboard.press("Enter")  # in a text field: a new line, no submit
    assert page.input_value("#comment") == "4 is right\n"
    assert not page.is_checked("input[name=c0][value='4']")
    assert page.url == item_url and _labels(user, ids[0]) == []

    page.keyboard.press("Escape")  # leave the field: shortcuts work again
    page.keyboard.press("4")
    assert page.is_checked("input[name=c0][value='4']")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    (label,) = _labels(user, ids[0])
    assert label["value"] == 4 and label["criterion"] == "Helpfulness"
    assert label["author"] == f"user:{user.username}" and label["comment"] == "4 is right\n"
    assert page.url.endswith(ids[1])  # the next item

    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("?")
    assert not page.is_visible("#help")
    page.keyboard.press("e")  # the output editor opens with the focus in it
    assert page.evaluate("document.activeElement.id") == "output-text"
    page.keyboard.type("s")  # typed into the editor: no skip
    assert page.url.endswith(ids[1])
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("s")
    assert page.url.endswith(ids[2]) and _labels(user, ids[1]) == []
    page.context.close()


def test_injected_html_renders_as_text(ui_live, browser):
    user = make_user(ui_live)
    five_point_criterion(user)
    script = "<script>alert('x')</script>"
    image = '<img src=x onerror="alert(1)">'
    (trace_id,) = ingest(
        user, {"input": script, "output": image, "contexts": [image], "model": "<b>m</b>"}
    )
    queue = _queue(user)
    page = browser_sign_in(browser, user)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in (f"{user.base}/traces/{trace_id}", f"{user.base}/queues/{queue['id']}/next"):
        page.goto(path)
        assert page.text_content("#trace-input").strip() == script
        assert page.text_content("#trace-output").strip() == image
        assert page.locator("main img").count() == 0
        assert page.locator("main script").count() == 0
    page.goto(f"{user.base}/traces")
    assert page.locator("#traces b").count() == 0 and "<b>m</b>" in page.text_content("#traces")
    page.wait_for_timeout(200)
    assert dialogs == []
    page.context.close()


class _AttackerPage(BaseHTTPRequestHandler):
    """Another origin (same host, another port) with a form aimed at the UI."""

    form = ""

    def do_GET(self) -> None:
        body = self.form.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_posts_without_the_token_or_from_another_origin_are_refused(ui_live, browser):
    user = make_user(ui_live)
    five_point_criterion(user)
    (trace_id,) = ingest(user, {"input": "q", "output": "a"})
    queue = _queue(user)
    page = browser_sign_in(browser, user)
    url = f"{user.base}/queues/{queue['id']}/items/{trace_id}"
    page.goto(url)
    token = page.get_attribute("#review-form input[name=csrf_token]", "value")
    status = page.evaluate(
        """(url) => fetch(url, {method: "POST", body: new URLSearchParams({c0: "4"})})
                  .then(r => r.status)""",
        url,
    )
    assert status == 403 and _labels(user, trace_id) == []

    _AttackerPage.form = (
        f'<form method="post" action="{ui_live.base_url}{url}">'
        f'<input name="c0" value="1"><input name="csrf_token" value="{token}">'
        '<button id="go">win a prize</button></form>'
    )
    attacker = ThreadingHTTPServer(("127.0.0.1", 0), _AttackerPage)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        with page.expect_navigation():
            page.click("#go")
        assert "another origin" in page.text_content("#problem")
    finally:
        attacker.shutdown()
    assert _labels(user, trace_id) == []  # even with a leaked token
    page.context.close()


def test_the_condition_bar_validates_as_you_type(ui_live, browser):
    user = make_user(ui_live)
    ingest(user, {"input": "a", "model": "m1"}, {"input": "b", "model": "m2"})
    page = browser_sign_in(browser, user)
    page.goto(f"{user.base}/traces")
    page.click("#condition")
    page.keyboard.type("model = ")
    page.wait_for_selector("#condition-check [data-valid=false]")
    assert "line 1" in page.text_content("#condition-check")
    page.keyboard.type("'m1'")
    page.wait_for_selector("#condition-check [data-valid=true]")
    assert page.text_content("#match-count") == ""  # no count as you type
    page.click("#count-matches")
    page.wait_for_selector("#match-count [data-count]")
    assert "1 trace matches" in page.text_content("#match-count")
    page.focus("#condition")
    page.keyboard.press("End")
    page.keyboard.type(" ")  # a changed condition clears the count it had
    page.wait_for_selector("#match-count [data-count]", state="detached")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("#traces tbody tr").count() == 1
    page.fill("#queue-from-filter input[name=name]", "m1 only")
    with page.expect_navigation():
        page.click("#queue-from-filter button")
    assert user.api().get("/review-queues/m1 only").json()["items"]["pending"] == 1
    page.context.close()


def _experiment(user, fake, latency):
    fake.default = behaviour(latency=latency)
    api = user.api()
    countries = ("France", "Italy", "Japan", "Spain")
    dataset = api.post(
        "/datasets",
        json={
            "name": "capitals",
            "examples": [{"question": f"What is the capital of {c}?"} for c in countries],
        },
    ).json()
    task = api.post(
        "/tasks", json={"name": "qa", "generator_model": fake.model_string("gen-default")}
    ).json()
    criterion = api.post(
        "/criteria",
        json={
            "name": "Names a capital",
            "criteria_type": "function",
            "function_name": "string_match",
            "output_type": "bool",
            "match_type": "regex_match",
            "match_pattern": "paris|rome|tokyo|madrid",
        },
    ).json()
    submitted = api.post(
        "/experiments",
        json={
            "name": "smart vs plain",
            "dataset_id": dataset["id"],
            "task_id": task["id"],
            "cohorts": [
                {
                    "name": "smart",
                    "generator_model": fake.model_string("gen-a"),
                    "system_prompt": "You are smart.",
                },
                {"name": "plain", "generator_model": fake.model_string("gen-b")},
            ],
            "criteria_ids": [criterion["id"]],
        },
    )
    assert submitted.status_code == 202, submitted.text
    return submitted.json()


def test_experiment_progress_reaches_100_percent_live_and_the_comparison_matches_the_api(
    ui_live, browser, fake
):
    user = make_user(ui_live)
    page = browser_sign_in(browser, user)  # first: signing in can take seconds on a loaded machine
    experiment = _experiment(user, fake, latency=1.0)
    page.goto(f"{user.base}/experiments/{experiment['id']}")
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    first = page.text_content("#percent")
    assert first != "100.0%", "the experiment finished before the page could watch it"
    page.wait_for_selector("#status[data-status=completed]", timeout=60_000)
    assert page.text_content("#percent") == "100.0%"
    assert navigations == []  # updated in place, never reloaded
    results = user.api().get(f"/experiments/{experiment['id']}/results").json()
    assert results["progress"]["percent"] == 100.0

    page.click("text=Compare cohorts")
    page.wait_for_selector("#compare-table")
    shown = {
        (cell.get_attribute("data-cohort"), cell.get_attribute("data-criterion")): (
            cell.locator("[data-mean]").text_content(),
            cell.locator("[data-coverage]").text_content(),
        )
        for cell in page.locator("#compare-table td[data-cohort]").all()
    }
    expected = {
        (s["cohort"], s["criterion"]): (f"{s['mean']:.3f}", f"{s['n_scored']}/{s['n']} scored")
        for s in results["summary"]
    }
    assert shown == expected and len(shown) == 2
    assert shown[("smart", "Names a capital")][0] == "1.000"
    assert shown[("plain", "Names a capital")][0] == "0.000"
    assert page.locator("#charts svg[role=img] rect.mean-bar").count() == 2  # the 0 bar too

    page.select_option("select[name=baseline]", "smart")
    page.select_option("select[name=worse]", "plain")
    with page.expect_navigation():
        page.click("#compare-form button")
    assert page.locator("#items tbody tr[data-example]").count() == 4  # plain is worse on all
    page.select_option("select[name=baseline]", "plain")
    with page.expect_navigation():
        page.click("#compare-form button")
    page.select_option("select[name=worse]", "smart")
    with page.expect_navigation():
        page.click("#compare-form button")
    assert "No example matches" in page.text_content("#items")
    page.context.close()


def test_a_dataset_edit_survives_a_reload(ui_live, browser):
    user = make_user(ui_live)
    made = user.api().post(
        "/datasets",
        json={
            "name": "faq",
            "examples": [
                {"question": "old question", "ground_truth_answer": "old answer"},
                {"question": "keep me", "ground_truth_context": ["a", "b"]},
            ],
        },
    )
    dataset_id = made.json()["id"]
    page = browser_sign_in(browser, user)
    page.goto(f"{user.base}/datasets/{dataset_id}")
    page.click("#example-0 button:text('Edit')")
    page.wait_for_selector("#example-0.editing")  # swapped in place by htmx
    page.fill("#example-0 textarea[name=question]", "new question")
    page.fill("#example-0 textarea[name=answer]", "new answer")
    with page.expect_navigation():
        page.click("#example-0 button[type=submit]")
    page.reload()
    assert page.text_content("#example-0 [data-question]") == "new question"
    assert page.text_content("#example-0 [data-answer]") == "new answer"
    assert "version 2 of 2" in page.text_content("#version-note")
    page.click("summary:text('Add an example')")
    page.fill("#add-example textarea[name=question]", "added question")
    page.fill("#add-example textarea[name=contexts]", "first\n---\nsecond")
    with page.expect_navigation():
        page.click("#add-example button")
    page.on("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("#example-1 button:text('Remove')")
    page.reload()
    assert [t.strip() for t in page.locator("#examples [data-question]").all_text_contents()] == [
        "new question",
        "added question",
    ]
    examples = user.api().get(f"/datasets/{dataset_id}/examples").json()["items"]
    assert [e["question"] for e in examples] == ["new question", "added question"]
    assert examples[1]["ground_truth_context"] == ["first", "second"]
    assert user.api().get(f"/datasets/{dataset_id}").json()["latest_version"] == 4
    page.goto(f"{user.base}/datasets/{dataset_id}?version=1")
    assert "read only" in page.text_content("#version-note")
    assert page.locator("#examples [data-question]").first.text_content() == "old question"
    page.context.close()


@pytest.fixture
def demo_user(ui_live):
    from assay.platform.server.ui.demo import DEMO_USER, seed_demo

    password = seed_demo(ui_live.app.state.assay)
    return DEMO_USER, password


def test_the_demo_project_signs_in_and_shows_its_pages(ui_live, browser, demo_user, tmp_path):
    """The README's screenshots come from here (ASSAY_UPDATE_SCREENSHOTS=1 writes docs/images)."""
    import os
    from pathlib import Path

    username, password = demo_user
    context = browser.new_context(
        base_url=ui_live.base_url, viewport={"width": 1280, "height": 860}
    )
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto("/ui/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/ui/p/\d+/dashboard$"))  # the landing page
    assert page.locator("#chart-latency svg[role=img] polyline").count() == 3
    shots = (
        Path(os.environ["ASSAY_SCREENSHOT_DIR"])
        if os.environ.get("ASSAY_SCREENSHOT_DIR")
        else tmp_path
    )
    dashboard = shots / "web-ui-dashboard.png"
    page.screenshot(path=str(dashboard), full_page=True)
    page.click("header.top nav >> text=Review queues")
    page.wait_for_url(re.compile(r".*/ui/p/\d+/queues$"))
    assert "support answers" in page.text_content("#queues")
    page.click("#queues a.button")
    page.wait_for_selector("#review-form fieldset[data-kind=likert]")
    assert page.locator("#review-form fieldset[data-kind=bool]").count() == 1
    assert "the judge's demo reason" in page.text_content("#review-form")
    review = shots / "web-ui-review.png"
    page.screenshot(path=str(review), full_page=True)
    page.click("text=Experiments")
    page.click("text=compare")
    page.wait_for_selector("#compare-table tbody tr")
    assert page.locator("#compare-table td[data-cohort]").count() == 4  # 2 cohorts × 2 criteria
    assert page.locator("#charts figure").count() == 2  # a chart per criterion, each its scale
    assert page.locator("#items a[data-trace-link]").count() == 12  # 6 examples × 2 cohorts
    compare = shots / "web-ui-compare.png"
    page.screenshot(path=str(compare), full_page=True)
    page.click("text=Traces")
    page.click("#traces tbody tr a")
    page.wait_for_selector("#waterfall")
    assert page.locator("#waterfall details.wf-span").count() == 3  # a function span holding two
    assert page.locator("#waterfall rect.wf-fill").count() == 3  # each span's bar
    page.locator("#waterfall details.wf-span").nth(2).locator("summary").click()  # the LLM span
    page.wait_for_selector("#waterfall details.wf-span[open] .wf-detail pre")
    trace = shots / "web-ui-trace.png"
    page.screenshot(path=str(trace), full_page=True)
    page.click("#trace-session")
    page.wait_for_selector("#conversation li.turn")
    assert page.locator("#conversation li.turn").count() >= 2
    assert page.locator("#conversation .message.user").count() >= 2
    session = shots / "web-ui-session.png"
    page.screenshot(path=str(session), full_page=True)
    assert problems == []  # no CSP violation, no script error on any page
    for shot in (dashboard, review, compare, trace, session):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    context.close()
