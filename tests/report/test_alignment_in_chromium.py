"""The alignment section of an `assay report` page opened in headless Chromium: the page stays
self-contained, the section's numbers are on the page, the reliability diagram is drawn, and a
reviewer's reason holding markup is shown as text."""

from __future__ import annotations

import re

from assay.alignment import AlignmentReport, LabeledExample, LabeledSet
from assay.alignment.scoring import RowScore
from assay.report import write_report
from tests.report.chromium import dump_dom, element_texts, visible_text
from tests.report.fixtures import INJECTION, write_results
from tests.report.test_report_in_chromium import check_self_contained


def test_the_alignment_section_in_a_browser(tmp_path):
    labels = [1, 1, 1, 0, 0, 0]
    before = [0.7, 0.45, 0.4, 0.3, 0.2, 0.6]
    after = [0.8, 0.6, 0.35, 0.3, 0.1, 0.45]
    rows = LabeledSet(
        [
            LabeledExample(
                id=f"r{i}",
                fields={"response": f"answer {i}"},
                label=y,
                reason=f"reviewer {i} {INJECTION}",
            )
            for i, y in enumerate(labels)
        ]
    )
    report = AlignmentReport.build(
        metric="faithfulness",
        kind="binary",
        rows=rows,
        scores=[RowScore(f"r{i}", v, reason="judge says") for i, v in enumerate(after)],
        threshold=0.4,
        before=[RowScore(f"r{i}", v) for i, v in enumerate(before)],
        before_threshold=0.5,
        n_resamples=100,
    )
    page = write_report(
        [write_results(tmp_path / "results.jsonl")], tmp_path / "report.html", sections=[report]
    )
    html = page.read_text(encoding="utf-8")
    check_self_contained(html)
    dom = dump_dom(page, tmp_path / "profile")
    [section] = element_texts(dom, "section", "alignment")
    text = " ".join(section.split())
    assert "Alignment of faithfulness with human labels" in text
    assert "6 of 6 held-out rows scored" in text and "threshold 0.400" in text
    # after (>= 0.4): yes 0.8 0.6 right, 0.35 missed; no 0.3 0.1 right, 0.45 wrong: 4/6
    # before (>= 0.5): yes 0.7 right, 0.45 0.4 missed; no 0.3 0.2 right, 0.6 wrong: 3/6
    assert re.search(r"agreement 0\.500 \[[^]]+\]\s*0\.667 \[[^]]+\]\s*\+0\.167", text), text
    assert "Confusion matrix, before" in text and "Confusion matrix, after" in text
    # one point per non-empty bin [low, high): before 0.2, 0.3, 0.4 and 0.45, 0.6, 0.7;
    # after 0.1, 0.3 and 0.35, 0.45, 0.6, 0.8
    drawn = re.findall(r'<circle class="(before|after)"', dom)
    assert (drawn.count("before"), drawn.count("after")) == (5, 5)
    # the worst disagreements show the reviewer's reason as text; nothing of it ran
    assert f"reviewer 2 {INJECTION}" in visible_text(dom)
    assert "data-pwned" not in dom
