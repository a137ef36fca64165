"""`assay report` pages opened in headless Chromium: what a reader sees is checked on the page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from assay.experiments import Dataset, experiment
from tests.report import chromium as browser
from tests.report.chromium import dump_dom, tags_of, visible_text
from tests.report.fixtures import INJECTION, write_data, write_results, write_run_dir


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def check_self_contained(html: str) -> None:
    assert not re.search(r"https?://", html), "the page must not reference any URL"
    assert "url(" not in html and "@import" not in html
    tags = tags_of(html)
    fetching = [
        (tag, attrs)
        for tag, attrs in tags
        if {"src", "href", "srcset", "action", "xlink:href"} & set(attrs)
    ]
    assert fetching == [], "the page must load nothing"
    assert not {"img", "link", "iframe", "object", "embed"} & {tag for tag, _ in tags}
    assert [tag for tag, _ in tags].count("script") == 1  # the report's own; the data's are text


def test_evaluation_results_page(tmp_path):
    write_results(tmp_path / "results.jsonl")
    made = assay("report", "results.jsonl", "-o", "report.html", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    check_self_contained(html)

    dom = dump_dom(tmp_path / "report.html", tmp_path / "profile")
    text = visible_text(dom)
    # per metric: name, mean with coverage, counts
    assert "faithfulness 0.500 coverage 2/4 rows (50%) 1 skipped, 1 error(s)" in text
    assert "correctness pass rate 0.750 coverage 4/4 rows (100%)" in text
    # charts: an inline SVG histogram and a label chart, with bars
    assert len(re.findall(r'<svg class="chart"', dom)) == 2 and "<rect" in dom
    # errors and skips with their messages and rows
    assert "OutputParseError: the judge's answer was not JSON (1 row(s): q3)" in text
    assert "no retrieved contexts to check the response against (1 row(s): q4)" in text
    # the drill-down: inputs, reasons, claim-level verdicts, raw output of a failed cell
    assert "When did Apollo 11 land on the Moon?" in text
    assert "the height is wrong" in text
    assert "The crew was Armstrong, Aldrin and Collins. yes 0.910" in text
    assert "Everest is 9,000 metres tall. no 0.040" in text
    assert "after 2 attempt(s)" in text and "Sure! {claims" in text
    # the injected markup is shown as text and did not run
    assert INJECTION in text
    assert "pwned" not in re.sub(
        r"&[a-z]+;|&#\d+;", "", dom.split("<body", 1)[0]
    )  # title untouched
    assert "data-pwned" not in dom
    # the script ran (under the page's content security policy)
    assert "4 of 4 rows shown" in text
    assert "tokens and cost not recorded in this file" in text


def test_run_directory_with_inputs_usage_and_unfinished_cells(tmp_path):
    write_run_dir(tmp_path / "run", finished=6)  # killed after 6 of 8 cells
    write_data(tmp_path / "data.jsonl")
    made = assay("report", "run", "--data", "data.jsonl", "-o", "out/run.html", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "out" / "run.html").read_text(encoding="utf-8")
    check_self_contained(html)
    text = visible_text(dump_dom(tmp_path / "out" / "run.html", tmp_path / "profile"))
    # 3 faithfulness cells (1200/150 tokens each) + 3 correctness cells (300/40) finished
    assert "tokens and cost 4,500 input + 570 output tokens, 12 request(s); cost $0.0075" in text
    assert "faithfulness 0.500 coverage 2/4 rows (50%) 0 skipped, 1 error(s), 1 not run" in text
    assert "3,600 input + 450 output tokens, 9 request(s); cost $0.0063" in text
    assert "Who wrote the Odyssey?" in text  # inputs from --data
    assert "not finished: the run stopped before this cell" in text


def _experiments(root: Path) -> None:
    rows = [{"id": f"r{i}", "question": f"question {i}", "target": i % 3} for i in range(30)]
    dataset = Dataset("qa", backend="local/jsonl", root_dir=root, data=rows)
    dataset.save()

    @experiment(show_progress=False)
    def scored(row, bonus):
        if row["id"] == "r7" and bonus:
            raise ValueError("<b>the app fell over</b>")
        score = min(1.0, 0.4 + 0.02 * (int(row["id"][1:]) % 5) + bonus)
        return {
            **row,
            "answer": f"answer to {row['question']}",
            "score": score,
            "verdict": {"value": "pass" if score > 0.5 else "fail", "reason": f"score {score:.2f}"},
        }

    scored.run(dataset, 0.0, name="baseline")
    scored.run(dataset, 0.3, name="improved")


def test_experiment_comparison_page(tmp_path):
    _experiments(tmp_path)
    made = assay("report", "baseline", "improved", "-o", "compare.html", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "compare.html").read_text(encoding="utf-8")
    check_self_contained(html)
    text = visible_text(dump_dom(tmp_path / "compare.html", tmp_path / "profile"))
    assert "assay report: baseline vs improved" in text
    assert "Rows matched by id" in text
    # score: +0.3 on every paired row (29: r7 failed in `improved`)
    assert (
        "improved − baseline : mean difference +0.300 , 95% interval [+0.300, +0.300], 29 paired row(s): 29 higher"
        in text
    )
    assert "improved higher (interval excludes 0)" in text
    # verdict: a pass/fail label read as a pass rate, per run
    assert "baseline: pass rate 0.000 coverage 30/30" in text
    assert "improved: pass rate 1.000 coverage 29/30" in text
    # the failed row: its error, escaped
    assert "ValueError: <b>the app fell over</b>" in text
    # dataset columns are data, not scores
    assert "<h3>target</h3>" not in html and "<h3>score</h3>" in html and "<h3>verdict</h3>" in html
    assert "answer to question 3" in text


def test_a_missing_chromium_fails_with_the_install_line(monkeypatch):
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    monkeypatch.setattr(browser, "CANDIDATES", ())
    with pytest.raises(
        pytest.fail.Exception, match=r"apt-get update -qq && apt-get install -y -qq chromium"
    ):
        browser.chromium()
