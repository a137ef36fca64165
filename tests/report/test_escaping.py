"""Every datum on the page is text: markup, a closing tag, template syntax and a quote that would
end an attribute, put into a response, a reason, a metric name, a row id, a column name, a label
and `details`, all render as themselves (in the HTML and in Chromium's DOM) and nothing runs."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from assay.report import build_report
from assay.report.page import content_security_policy
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Ok, Skipped
from assay.schema.result import EvaluationResult
from tests.report.chromium import dump_dom, element_texts, tags_of, visible_text

PLACES = ("response", "reason", "metric", "id", "column", "label", "skip", "detail", "experiment")


def payload(where: str) -> str:
    """Markup that would run, a closing tag, Jinja syntax, and a quote ending an attribute."""
    return (
        f"<script>document.title='pwned-{where}'</script>"
        f"<img src=x onerror=\"document.body.dataset.pwned='{where}'\">"
        f'</textarea>{{{{ 7*7 }}}}" data-injected="{where}'
    )


METRIC, COLUMN = payload("metric"), payload("column")


def row_id(i: int) -> str:
    return f"{payload('id')} #{i}"


def _results(shift: float) -> EvaluationResult:
    rows = [
        {
            "id": row_id(i),
            "user_input": f"question {i}",
            "response": payload("response") + (" v2" if shift else ""),
            COLUMN: f"column value {i}",
        }
        for i in range(3)
    ]
    outcomes = [
        {
            METRIC: Ok(
                value=0.2 * i + shift,
                reason=payload("reason"),
                details={
                    payload("detail"): [{payload("detail"): payload("detail"), "verdict": "yes"}]
                },
            ),
            "verdict": Ok(value=payload("label")) if i else Skipped(reason=payload("skip")),
        }
        for i in range(3)
    ]
    specs = [
        {"name": METRIC, "class": "X", "version": "1", "params": {}},
        {"name": "verdict", "class": "Y", "version": "1", "params": {}},
    ]
    return EvaluationResult(EvaluationDataset.from_list(rows), specs, outcomes)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("escaping")
    _results(0.0).to_jsonl(root / "baseline.jsonl")
    _results(0.3).to_jsonl(root / "other.jsonl")
    experiment = [
        {"id": row_id(i), COLUMN: "x", METRIC: {"value": 0.5, "reason": payload("experiment")}}
        for i in range(3)
    ]
    (root / "experiment.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in experiment), encoding="utf-8"
    )
    html = build_report([root / "baseline.jsonl", root / "other.jsonl", root / "experiment.jsonl"])
    (root / "report.html").write_text(html, encoding="utf-8")
    return html, dump_dom(root / "report.html", root / "profile")


def _no_injected_markup(markup: str) -> None:
    tags = tags_of(markup)
    assert [tag for tag, _ in tags].count("script") == 1  # the report's own
    assert not {"img", "textarea"} & {tag for tag, _ in tags}
    attributes = {name for _, attrs in tags for name in attrs}
    assert (
        "data-injected" not in attributes
        and "onerror" not in attributes
        and "data-pwned" not in attributes
    )


def _every_datum_is_text(markup: str) -> None:
    text = visible_text(markup)
    for where in PLACES:
        assert payload(where) in text, where
    # a template that ran the probe would show 49; file paths (pytest-493/...) and the
    # page's own "made 2026-12-06 12:49 UTC" stamp are not data
    outside_paths = re.sub(r"/\S+", " ", text)
    outside_paths = re.sub(r"made \d{4}-\d\d-\d\d \d\d:\d\d UTC", " ", outside_paths)
    assert "{{ 7*7 }}" in text and not re.search(r"(?<!\d)49(?!\d)", outside_paths)
    assert element_texts(markup, "title")[0] == "assay report: baseline vs other vs experiment"
    assert METRIC in element_texts(markup, "h3")  # the metric's card
    assert row_id(0) in element_texts(markup, "span", "key")
    assert COLUMN in element_texts(markup, "dt")
    assert payload("reason") in element_texts(markup, "div", "reason")
    assert any(payload("skip") in item for item in element_texts(markup, "details", "problems"))
    assert f"baseline: {payload('label')}: 2 row(s)" in element_texts(
        markup, "title"
    )  # a bar's tooltip in the SVG
    assert payload("label")[:13] + "…" in element_texts(markup, "text")  # its tick label
    # attributes keep the quote inside them
    tags = tags_of(markup)
    assert {
        attrs.get("title")
        for tag, attrs in tags
        if tag == "span" and "pair" in (attrs.get("class") or "")
    } == {METRIC, "verdict"}
    assert ("article", f"metric-{METRIC}") in {
        (tag, attrs.get("id")) for tag, attrs in tags if tag == "article"
    }


def test_data_render_as_text_in_the_html(page):
    html, _ = page
    _no_injected_markup(html)
    _every_datum_is_text(html)


def test_data_render_as_text_in_chromium_and_nothing_runs(page):
    _, dom = page
    _no_injected_markup(dom)
    _every_datum_is_text(dom)
    assert "pwned" not in re.sub(
        r"&[a-z]+;|&#\d+;", "", dom.split("<body", 1)[0]
    )  # title untouched
    assert "3 of 3 rows shown" in visible_text(dom)  # the page's own script ran


def test_the_policy_allows_exactly_the_page_script(page):
    html, _ = page
    policy = next(
        attrs["content"]
        for tag, attrs in tags_of(html)
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert policy == content_security_policy()
    script = html.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    assert re.findall(r"script-src ([^;]+)", policy) == [f"'sha256-{digest}'"]
    assert "default-src 'none'" in policy
