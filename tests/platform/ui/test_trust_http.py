"""How far to trust a criterion's scores in the web UI, over plain HTTP on SQLite and PostgreSQL:
the dashboard's panels and the criterion page show the API's `trust` figures (the judge's card
row by row, or "no card for this judge" and why; the judge's, the labels' and the corrected
mean with its interval and the labels that would halve it; the alert with its figures), the
criteria list links to the page, a missing or too long name is a 422 naming `name`, what is
echoed is escaped, and someone outside the project gets a 404."""

from __future__ import annotations

import html as html_lib
import random
import re

import pytest
from sqlalchemy import select

from assay.benchmark.cards import judge_card
from assay.platform.server.storage import models
from tests.platform.ui.conftest import five_point_criterion, ingest, make_user, sign_in


def _seed(user):
    rng = random.Random(5)
    ids = ingest(user, *[{"input": f"q{i}", "output": f"a{i}"} for i in range(24)])
    judged = {t: round(rng.random(), 3) for t in ids}
    five_point_criterion(user, "helpful")
    scores = [
        {"trace_id": t, "criterion": "faithfulness", "value": v, "source": "judge:local"}
        for t, v in judged.items()
    ] + [
        {"trace_id": t, "criterion": "helpful", "value": 3, "source": "judge:openai/gpt-4o-mini"}
        for t in ids
    ]
    assert user.api().post("/traces/scores", json={"scores": scores}).status_code == 201
    # people say the opposite of the judge: agreement far below the card's
    labels = {t: judged[t] < 0.5 for t in ids[:16]}
    with user.live.app.state.assay.transaction() as session:
        session.add_all(
            models.TraceLabel(
                project_id=user.project_id, trace_id=t, criterion="faithfulness", value=v,
                author="key:test",
            )
            for t, v in labels.items()
        )  # fmt: skip
        session.add(
            models.TraceLabel(
                project_id=user.project_id, trace_id=ids[0], criterion="helpful", value=4,
                author="key:test",
            )
        )  # fmt: skip
    return ids


def _text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))


def _panel(html: str, criterion: str) -> str:
    found = re.search(
        rf'<section class="trust" data-criterion="{criterion}">(.*?)</section>', html, re.S
    )
    assert found, f"no trust panel of {criterion}"
    return found.group(1)


def _two(value: float) -> str:
    return f"{value:.2f}"


def test_the_dashboard_and_criterion_page_show_the_trust_figures(live):
    user = make_user(live)
    _seed(user)
    client = sign_in(user)
    trust = user.api().get("/dashboard", params={"range": "7d"}).json()["trust"]
    faith = trust["faithfulness"]
    assert faith["alert"]["status"] == "below"
    card = judge_card("faithfulness", "local")

    page = client.get(f"{user.base}/dashboard", params={"range": "7d"})
    assert page.status_code == 200
    assert 'id="trust-heading"' in page.text and "/ui/static/trust.css" in page.text
    panel = _panel(page.text, "faithfulness")
    assert panel.count('data-trust="agreement-row"') == len(card.agreement)
    first = card.agreement[0]
    assert f"{first.value:.3f}" in panel and f"{first.low:.3f}–{first.high:.3f}" in panel
    assert "Stability:</strong> unmeasured" in panel
    for missing in card.unmeasured:
        assert html_lib.escape(missing, quote=True) in panel or missing in _text(panel)
    alert = re.search(r'data-trust="alert">(.*?)</p>', panel, re.S)
    assert alert, "no alert shown"
    recent = faith["alert"]["recent"]
    shown = _text(alert.group(1))
    assert f"{_two(recent['value'])} [{_two(recent['low'])}, {_two(recent['high'])}]" in shown
    assert f"on the {recent['n']} latest labels" in shown
    low, high = faith["alert"]["card"]["low"], faith["alert"]["card"]["high"]
    assert f"[{_two(low)}, {_two(high)}]" in shown
    estimate = faith["estimate"]
    corrected = _text(re.search(r'data-trust="corrected">(.*?)</dd>', panel, re.S).group(1))
    assert corrected.startswith(_two(estimate["value"]))
    assert f"{_two(estimate['low'])}–{_two(estimate['high'])}" in corrected
    judge_mean = _text(re.search(r'data-trust="judge-mean">(.*?)</dd>', panel, re.S).group(1))
    assert judge_mean.startswith(_two(estimate["judge_mean"])) and "over 24 judged" in judge_mean
    halve = _text(re.search(r'data-trust="halve">(.*?)</dd>', panel, re.S).group(1))
    more = estimate["more_labels_to_halve"]
    assert (f"about {more} more labels" if more is not None else "cannot") in halve

    helpful = _panel(page.text, "helpful")
    assert 'data-trust="alert"' not in helpful
    no_card = _text(re.search(r'data-trust="no-card">(.*?)</p>', helpful, re.S).group(1))
    assert no_card == trust["helpful"]["judge"]["no_card"][:1].upper() + (
        trust["helpful"]["judge"]["no_card"][1:] + "."
    )
    assert no_card.startswith("No card for this judge")
    assert "1 label on judged traces" in _text(helpful)  # one label: no estimate

    own = client.get(f"{user.base}/criterion", params={"name": "faithfulness", "range": "7d"})
    assert own.status_code == 200
    assert _panel(own.text, "faithfulness").count('data-trust="agreement-row"') == len(
        card.agreement
    )
    assert 'data-trust="alert"' in own.text and 'id="criterion-definition"' not in own.text
    saved = client.get(f"{user.base}/criterion", params={"name": "helpful"})
    with live.app.state.assay.transaction() as session:
        ident = session.scalar(
            select(models.Criteria.id).where(
                models.Criteria.project_id == user.project_id, models.Criteria.name == "helpful"
            )
        )
    assert f'href="{user.base}/criteria/{ident}" id="criterion-definition"' in saved.text
    listing = client.get(f"{user.base}/criteria")
    assert f'href="{user.base}/criterion?name=helpful" data-trust-link' in listing.text


def test_the_criterion_page_refuses_a_bad_name_and_outsiders(live):
    user = make_user(live)
    client = sign_in(user)
    missing = client.get(f"{user.base}/criterion")
    assert missing.status_code == 422 and "name: name the criterion" in missing.text
    long = client.get(f"{user.base}/criterion", params={"name": "x" * 201})
    assert long.status_code == 422 and "name: a criterion&#39;s name is at most 200" in long.text
    bad_range = client.get(f"{user.base}/criterion", params={"name": "a", "range": "2y"})
    assert bad_range.status_code == 422 and "range: must be one of" in bad_range.text
    odd = client.get(f"{user.base}/criterion", params={"name": "<b>odd</b>"})
    assert odd.status_code == 200 and "<b>odd</b>" not in odd.text
    assert "&lt;b&gt;odd&lt;/b&gt;" in odd.text
    assert "No card for this judge: no score of this criterion in the range." in odd.text
    outsider = sign_in(make_user(live, name=f"out-{user.project_id}"))
    assert outsider.get(f"{user.base}/criterion", params={"name": "a"}).status_code == 404


@pytest.mark.parametrize("name", ["faithfulness"])
def test_the_criterion_page_in_the_projects_navigation(live, name):
    user = make_user(live)
    client = sign_in(user)
    page = client.get(f"{user.base}/criterion", params={"name": name})
    assert page.status_code == 200 and f"<h1>Criterion {name}</h1>" in page.text
    assert f'href="{user.base}/dashboard"' in page.text  # the project's navigation stays
