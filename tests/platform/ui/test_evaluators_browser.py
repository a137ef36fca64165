"""The online evaluators page in Debian's chromium (Playwright), at desktop width and at 390 px:
reached from the navigation, the form creates an evaluator (a bad sample rate is named beside its
field first), the Pause and Resume buttons change its status as the API sees it, no request
leaves 127.0.0.1, no script or CSP error, and at 390 px nothing runs off the page."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests.platform.ui.conftest import browser_sign_in, make_user

pytestmark = pytest.mark.slow  # a browser: a few seconds

CORRECT = {
    "name": "Correct",
    "criteria_type": "llm_judge",
    "output_type": "bool",
    "header": "Is it right?",
    "bool_true": "yes",
    "bool_false": "no",
}


def _watch(page):
    seen: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    return seen, problems


@pytest.mark.parametrize("width", [1280, 390])
def test_create_pause_and_resume_in_the_browser(ui_live, browser, width, tmp_path):
    user = make_user(ui_live, fresh=True)
    assert user.api().post("/criteria", json=CORRECT).status_code == 201
    page = browser_sign_in(browser, user, viewport={"width": width, "height": 860})
    seen, problems = _watch(page)
    with page.expect_navigation():
        page.click("header.top nav a:has-text('Evaluators')")
    assert page.url.endswith(f"{user.base}/evaluators")
    assert page.locator("#no-evaluators").is_visible()

    page.fill("#create-evaluator input[name=name]", "Prod answers")
    page.fill("#create-evaluator input[name=condition]", "metadata.env = 'prod'")
    page.fill("#create-evaluator input[name=sample_rate]", "2")
    page.check("#create-evaluator input[name=criteria][value=Correct]")
    page.fill("#create-evaluator input[name=judge_model]", "vllm/judge@http://127.0.0.1:9/v1")
    with page.expect_navigation():
        page.click("#create-evaluator button[type=submit]")
    assert "from 0 to 1" in page.text_content("[data-problem=sample_rate]")
    assert page.input_value("#create-evaluator input[name=name]") == "Prod answers"  # kept
    page.fill("#create-evaluator input[name=sample_rate]", "0.5")
    page.check("#create-evaluator input[name=criteria][value=Correct]")
    with page.expect_navigation():
        page.click("#create-evaluator button[type=submit]")

    (made,) = user.api().get("/evaluators").json()["items"]
    card = page.locator(f"#evaluator-{made['id']}")
    assert card.locator("[data-status]").text_content() == "active"
    assert "50.0% of matching traces" in card.locator("[data-sample]").text_content()
    with page.expect_navigation():
        card.locator("button[data-action=pause]").click()
    card = page.locator(f"#evaluator-{made['id']}")
    assert card.locator("[data-status]").text_content() == "paused"
    assert user.api().get("/evaluators/Prod answers").json()["status"] == "paused"
    with page.expect_navigation():
        card.locator("button[data-action=resume]").click()
    assert user.api().get("/evaluators/Prod answers").json()["status"] == "active"

    width_used = page.evaluate("document.documentElement.scrollWidth")
    assert width_used <= width, f"the page is {width_used} px wide at {width} px"
    for selector in (f"#evaluator-{made['id']}", "#create-evaluator", "header.top nav"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, selector
    nav = page.locator("header.top nav a:has-text('Evaluators')").bounding_box()
    assert nav is not None and nav["x"] + nav["width"] <= width  # the link is not cut off
    shot = tmp_path / f"evaluators-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    hosts = {urlsplit(url).hostname for url in seen if not url.startswith("data:")}
    assert hosts == {"127.0.0.1"}, seen
    # the one console line is the browser noting the refused form's 422; no script or CSP error
    assert [p for p in problems if "status of 422" not in p] == [], problems
    assert len(problems) == 1
    assert re.search(r"/evaluators(#evaluator-\d+)?$", page.url)
    page.context.close()
