"""The retention form of a project's settings page. Over HTTP on SQLite and PostgreSQL: an admin
sets and clears the project's horizon (the API reads the same value), a bad value is a 422 naming
the field and changes nothing, a member who is not an admin gets a 403. In Debian's chromium
(slow): the form saves, the page says which horizon applies, no request leaves 127.0.0.1."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from assay.platform.server.schemas.bodies import RETENTION_DAYS_MAX
from tests.platform.ui.conftest import browser_sign_in, csrf_in, make_user, sign_in


def _days(user) -> int | None:
    return user.api().get("/project/settings").json()["retention_days"]


@pytest.mark.slow  # three sign-ins (argon2): about 3 s a backend
def test_an_admin_sets_the_retention_and_others_cannot(live):
    owner = make_user(live, role="admin")
    colleague = make_user(live, owner.project)  # a member, not an admin
    client = sign_in(owner)
    page = client.get(f"{owner.base}/settings")
    assert page.status_code == 200 and "forever" in page.text  # no server default in tests
    token = csrf_in(page.text)
    saved = client.post(
        f"{owner.base}/settings/retention", data={"csrf_token": token, "retention_days": "14"}
    )
    assert saved.status_code == 303 and _days(owner) == 14
    assert "14 days" in client.get(f"{owner.base}/settings").text
    for bad in ("two weeks", "0", str(RETENTION_DAYS_MAX + 1), "1.5", "-3"):
        refused = client.post(
            f"{owner.base}/settings/retention", data={"csrf_token": token, "retention_days": bad}
        )
        assert refused.status_code == 422 and "retention_days" in refused.text, bad
        # the form again, with what was typed and why, next to it
        assert 'id="retention-error"' in refused.text and f'value="{bad}"' in refused.text, bad
        assert 'id="members"' in refused.text  # the whole settings page, not an error page
    assert _days(owner) == 14
    other = sign_in(colleague)
    theirs = csrf_in(other.get(f"{owner.base}/queues").text)
    forbidden = other.post(
        f"{owner.base}/settings/retention", data={"csrf_token": theirs, "retention_days": "1"}
    )
    assert forbidden.status_code == 403 and _days(owner) == 14
    cleared = client.post(
        f"{owner.base}/settings/retention", data={"csrf_token": token, "retention_days": ""}
    )
    assert cleared.status_code == 303 and _days(owner) is None


@pytest.mark.slow  # a browser: a few seconds
def test_the_retention_form_in_the_browser(ui_live, browser):
    user = make_user(ui_live, role="admin", fresh=True)
    page = browser_sign_in(browser, user, viewport={"width": 390, "height": 860})
    seen: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{user.base}/settings")
    assert "forever" in page.text_content("#retention-now")
    page.fill("#retention input[name=retention_days]", "30")
    with page.expect_navigation():
        page.click("#retention button[type=submit]")
    assert "30 days" in page.text_content("#retention-now")
    assert page.input_value("#retention input[name=retention_days]") == "30"
    assert _days(user) == 30
    page.fill("#retention input[name=retention_days]", "a month")
    with page.expect_navigation():
        page.click("#retention button[type=submit]")
    assert "retention_days" in page.text_content("body") and _days(user) == 30
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 392  # nothing runs off a 390 px screen
    assert {urlsplit(u).hostname for u in seen} == {"127.0.0.1"} and not problems
