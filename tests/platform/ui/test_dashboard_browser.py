"""The dashboard in Debian's chromium (Playwright) on the demo project: signing in lands on it,
its figures are the API's, its charts are drawn (inline SVG), no request leaves 127.0.0.1 and
no script or CSP error happens; the range form works; at 390 px nothing runs off the page.
(The README's dashboard screenshot is taken by the demo test of `test_ui_browser.py`, in the
default run.)"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.slow  # a browser and the demo's 600 traces: about 6 s


@pytest.fixture
def demo(ui_live):
    from assay.platform.server.ui.demo import DEMO_PROJECT, DEMO_USER, seed_demo

    password = seed_demo(ui_live.app.state.assay)
    return DEMO_USER, password, ui_live.client(ui_live.key(DEMO_PROJECT, scopes=("read",)))


def _open(browser, live, username, password, **options):
    context = browser.new_context(base_url=live.base_url, **options)
    context.set_default_timeout(15_000)
    page = context.new_page()
    seen: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto("/ui/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/ui/p/\d+/dashboard$"))
    return context, page, seen, problems


def test_the_demo_dashboard_in_the_browser(ui_live, browser, demo, tmp_path):
    username, password, api = demo
    context, page, seen, problems = _open(
        browser, ui_live, username, password, viewport={"width": 1280, "height": 900}
    )
    figures = api.get("/dashboard", params={"range": "7d"}).json()
    assert figures["traces"] > 100  # the demo's traffic
    assert page.text_content("[data-figure=traces]") == str(figures["traces"])
    rate = page.text_content("[data-figure=error_rate]")
    assert rate == f"{100 * figures['error_rate']:.1f}%"
    assert (
        page.locator("#chart-volume svg[role=img] rect").count() >= 7
    )  # a bar (or two parts) a day
    assert page.locator("#chart-latency svg[role=img] polyline").count() == 3  # p50, p95, p99
    assert (
        page.locator("#chart-tokens svg[role=img] rect").count() == 4
    )  # two models x input/output
    for index in range(len(figures["scores"])):  # Relevance and Correct, each with its band
        assert page.locator(f"#chart-score-{index} svg[role=img] polygon.band").count() >= 1
    coverage = page.locator("#chart-evaluators svg[role=img] rect title").first.text_content()
    relevance = figures["evaluators"][0]
    assert coverage.startswith(f"relevance v1 (paused): {100 * relevance['coverage']:.0f}% of ")
    tip = page.locator("#chart-volume svg[role=img] rect title").first.text_content()
    assert re.match(r"\d{4}-\d\d-\d\d: \d+ (ok|failed)", tip), tip

    desktop = tmp_path / "dashboard.png"
    page.screenshot(path=str(desktop), full_page=True)

    page.select_option("#range", "30d")
    page.fill("#condition", "model = 'demo/support-bot-mini'")
    with page.expect_navigation():
        page.click("#dash-form button[type=submit]")
    assert "range=30d" in page.url
    mini = api.get(
        "/dashboard", params={"range": "30d", "condition": "model = 'demo/support-bot-mini'"}
    ).json()
    assert page.text_content("[data-figure=traces]") == str(mini["traces"])
    assert 0 < mini["traces"] < figures["traces"]
    assert page.locator("#chart-tokens svg[role=img] rect").count() == 2  # one model left

    hosts = {urlsplit(url).hostname for url in seen if not url.startswith("data:")}
    assert hosts == {"127.0.0.1"}, seen
    assert problems == []  # no CSP violation, no script error
    assert desktop.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and desktop.stat().st_size > 30_000
    context.close()


def test_the_dashboard_at_390_px(ui_live, browser, demo, tmp_path):
    username, password, _api = demo
    context, page, _seen, problems = _open(
        browser, ui_live, username, password, viewport={"width": 390, "height": 844}
    )
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
    for selector in ("#dash-figures", "#chart-volume", "#chart-latency", "#chart-evaluators"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, selector
    latency = page.locator("#chart-latency svg[role=img]").bounding_box()
    assert latency is not None and latency["height"] > 120  # scaled down, still readable
    page.screenshot(path=str(tmp_path / "dashboard-390.png"), full_page=True)
    assert problems == []
    context.close()
