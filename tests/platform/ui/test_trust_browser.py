"""The trust panels in Debian's chromium (Playwright), at 1280 and at 390 px: on the dashboard,
the faithfulness panel shows its judge's card row by row and the alert (visible, with the API's
figures), the criterion page is reached from the panel's link and from the criteria list, no
request leaves 127.0.0.1, no script or CSP error happens, and at 390 px nothing runs off the
page. Screenshots are written to the test's temporary folder."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from assay.benchmark.cards import judge_card
from tests.platform.ui.conftest import browser_sign_in, make_user
from tests.platform.ui.test_trust_http import _seed

pytestmark = pytest.mark.slow  # a browser: a few seconds


def _fits(page, width: int, selectors: tuple[str, ...]) -> None:
    used = page.evaluate("document.documentElement.scrollWidth")
    assert used <= width, f"the page is {used} px wide at {width} px"
    for selector in selectors:
        box = page.locator(selector).first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, selector


@pytest.mark.parametrize("width", [1280, 390])
def test_the_trust_panels_in_the_browser(ui_live, browser, width, tmp_path):
    user = make_user(ui_live, fresh=True)
    _seed(user)
    trust = user.api().get("/dashboard", params={"range": "7d"}).json()["trust"]
    page = browser_sign_in(browser, user, viewport={"width": width, "height": 900})
    seen: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{user.base}/dashboard?range=7d")

    panel = page.locator("section.trust[data-criterion=faithfulness]")
    rows = panel.locator("[data-trust=agreement-row]")
    assert rows.count() == len(judge_card("faithfulness", "local").agreement)
    alert = panel.locator("[data-trust=alert]")
    assert alert.is_visible() and alert.get_attribute("role") == "alert"
    recent = trust["faithfulness"]["alert"]["recent"]
    assert f"on the {recent['n']} latest labels" in alert.text_content()
    corrected = panel.locator("[data-trust=corrected]").text_content()
    assert corrected.startswith(f"{trust['faithfulness']['estimate']['value']:.2f}")
    no_card = page.locator("section.trust[data-criterion=helpful] [data-trust=no-card]")
    assert no_card.is_visible() and no_card.text_content().startswith("No card for this judge")
    _fits(page, width, ("#trust", "section.trust", "header.top nav"))
    page.screenshot(path=str(tmp_path / f"trust-dashboard-{width}.png"), full_page=True)

    with page.expect_navigation():
        panel.locator("a.trust-more").click()
    assert page.url.endswith(f"{user.base}/criterion?name=faithfulness")
    assert page.locator("h1").text_content() == "Criterion faithfulness"
    assert page.locator("[data-trust=alert]").is_visible()
    _fits(page, width, ("#trust", "#criterion-form"))
    page.screenshot(path=str(tmp_path / f"trust-criterion-{width}.png"), full_page=True)

    page.goto(f"{user.base}/criteria")
    with page.expect_navigation():
        page.locator("a[data-trust-link]").first.click()
    assert page.locator("h1").text_content() == "Criterion helpful"
    assert page.locator("#criterion-definition").is_visible()

    assert {urlsplit(url).hostname for url in seen} == {"127.0.0.1"}
    assert problems == []
