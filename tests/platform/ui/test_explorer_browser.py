"""The trace explorer in Debian's chromium (Playwright) on the demo project: at 390 px the traces
table, a trace's waterfall and a session fit the screen (the table scrolls inside its box, its
short cells stay on one line, the navigation is all reachable); on a desktop the table sorts by a
header, filters by the quick filters, pages older and newer, and a trace is labelled from its
page. No request leaves 127.0.0.1 and no script or CSP error happens. (The README's trace and
session screenshots are taken by the demo test of `test_ui_browser.py`.)"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.platform.ui.test_dashboard_browser import _open as open_signed_in


@pytest.fixture
def demo(ui_live):
    from assay.platform.server.ui.demo import DEMO_USER, seed_demo

    return DEMO_USER, seed_demo(ui_live.app.state.assay)


def _open(browser, live, username, password, **options):
    """Signed in as the demo user (the dashboard test's helper), and the project's UI base."""
    context, page, seen, problems = open_signed_in(browser, live, username, password, **options)
    return context, page, page.url.rsplit("/", 1)[0], seen, problems


def _fits(page, width: int = 390) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width} px"
    for link in page.locator("header.top nav a").all():
        box = link.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (
            link.text_content()
        )


def test_the_explorer_at_390_px(ui_live, browser, demo, tmp_path):
    context, page, base, seen, problems = _open(
        browser, ui_live, *demo, viewport={"width": 390, "height": 844}
    )
    page.goto(f"{base}/traces")
    page.wait_for_selector("#traces tbody tr")
    _fits(page)
    scroller = page.locator(".table-scroll").bounding_box()
    assert scroller is not None and scroller["x"] + scroller["width"] <= 390
    created = page.locator("#traces tbody tr td.nowrap a").first.bounding_box()
    line = page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    assert created is not None and created["height"] < 1.5 * line  # one line, not a word each
    page.screenshot(path=str(tmp_path / "traces-390.png"), full_page=True)

    page.locator("#traces tbody tr a").first.click()
    page.wait_for_selector("#waterfall")
    _fits(page)
    bar = page.locator("#waterfall svg.wf-bar rect").first.bounding_box()
    assert bar is not None and bar["width"] > 100  # the bars get the row's width below the name

    page.goto(f"{base}/sessions/chat-ada")
    page.wait_for_selector("#conversation li.turn")
    assert page.locator("#conversation li.turn").count() == 3
    _fits(page)
    page.goto(f"{base}/sessions")
    _fits(page)
    assert page.locator("#sessions tbody tr").count() == 2
    page.screenshot(path=str(tmp_path / "session-390.png"), full_page=True)

    hosts = {urlsplit(url).hostname for url in seen if not url.startswith("data:")}
    assert hosts == {"127.0.0.1"}, seen
    assert problems == []
    context.close()


@pytest.mark.slow  # sorting, filtering, paging and an action through the browser: about 6 s
def test_the_explorer_sorts_filters_pages_and_labels(ui_live, browser, demo):
    context, page, base, seen, problems = _open(
        browser, ui_live, *demo, viewport={"width": 1280, "height": 900}
    )
    page.goto(f"{base}/traces")
    assert page.text_content("#page-position").strip().startswith("Traces 1–50 of")

    with page.expect_navigation():
        page.click("#traces thead a[data-sort=latency]")
    assert "sort=latency" in page.url
    shown = page.locator("#traces tbody tr td:nth-child(4)").all_text_contents()

    def ms(text: str) -> float:
        number, unit = text.split()
        return float(number) * (1000 if unit == "s" else 1)

    assert [ms(t) for t in shown] == sorted((ms(t) for t in shown), reverse=True)

    page.goto(f"{base}/traces")
    page.select_option("#status", "error")
    with page.expect_navigation():
        page.click("#quick-filters button[type=submit]")
    assert "status=error" in page.url
    statuses = page.locator("#traces tbody tr td:nth-child(2)").all_text_contents()
    assert statuses and set(statuses) == {"error"}

    page.goto(f"{base}/traces")
    first_ids = page.locator("#traces tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.trace)"
    )
    with page.expect_navigation():
        page.click("#page-older")
    assert page.text_content("#page-position").strip().startswith("Traces 51–100")
    with page.expect_navigation():
        page.click("#page-newer")
    again = page.locator("#traces tbody tr").evaluate_all("rows => rows.map(r => r.dataset.trace)")
    assert again == first_ids

    page.fill("#condition", "session_id = 'chat-ada'")
    page.wait_for_selector("#condition-check [data-valid=true]")
    with page.expect_navigation():
        page.click("#explorer-form > button[type=submit]")
    assert page.locator("#traces tbody tr").count() == 3

    page.locator("#traces tbody tr a").first.click()
    page.wait_for_selector("#waterfall")
    page.click("#trace-actions summary >> text=Label")
    page.fill("#label-form input[name=criterion]", "Tone")
    page.fill("#label-form input[name=value]", "friendly")
    with page.expect_navigation():
        page.click("#label-form button[type=submit]")
    assert "labelled Tone: friendly" in page.text_content("#action-done")
    assert "friendly" in page.text_content("#labels")

    hosts = {urlsplit(url).hostname for url in seen if not url.startswith("data:")}
    assert hosts == {"127.0.0.1"}, seen
    assert problems == []
    context.close()
