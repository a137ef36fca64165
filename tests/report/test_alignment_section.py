"""The alignment section of `assay report`: a real AlignmentReport (a faithfulness judge aligned and
validated through the real metric path, with a scripted judge) rendered into the report page, the
page parsed, and its confusion matrices and reliability diagram checked against hand counts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from assay.alignment import AlignmentReport, from_rows
from assay.alignment.html import PAD, SIZE
from assay.errors import DataError, UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from assay.report import build_report, load_run
from tests.alignment.scripted import faithfulness_judge, keyword_embedder, last_items
from tests.report.fixtures import write_results

CITIES = ["paris", "rome", "berlin", "madrid", "lisbon", "vienna"]

# Held-out rows: (label, P(yes) of the unaligned judge). Shown examples, the judge says yes with
# 0.1 more: before alignment rows are read at 0.5, after at the threshold fitted on training rows.
TEST_ROWS = [
    (1, 0.82),
    (1, 0.71),
    (1, 0.44),
    (1, 0.23),
    (0, 0.25),
    (0, 0.12),
    (0, 0.04),
    (0, 0.61),
    (1, 0.64),
]
SHIFT = 0.1


def train_rows():
    rows = []
    for i in range(24):
        city = CITIES[i % len(CITIES)]
        good = (i // len(CITIES)) % 3 != 0
        rows.append(
            {
                "id": f"train{i}",
                "response": f"The meeting is in {city} {'indeed' if good else 'maybe'} {i}.",
                "retrieved_contexts": [f"The meeting is in {city}."],
                "label": int(good),
                "group": f"g{i // 2}",
            }
        )
    return from_rows(rows, group_column="group")


def held_out_rows():
    return from_rows(
        [
            {
                "id": f"t{i}",
                "response": f"Item test {i} is described.",
                "retrieved_contexts": [f"Item test {i}."],
                "label": label,
                "reason": f"reviewer on t{i}",
                "group": f"test{i}",
            }
            for i, (label, _) in enumerate(TEST_ROWS)
        ],
        group_column="group",
    )


def p_of(request) -> float:
    items = last_items(request)
    shown = any("meeting" in str(m.content) for m in request.messages[:-1])
    found = re.search(r"test (\d+)", items)
    p = TEST_ROWS[int(found.group(1))][1] if found else (0.4 if "indeed" in items else 0.2)
    return min(1.0, p + SHIFT) if shown else p


@pytest.fixture(scope="module")
def report() -> AlignmentReport:
    llm, _ = faithfulness_judge(p_of)
    embeddings, _ = keyword_embedder()
    return Faithfulness(llm=llm).align_and_validate(
        train_rows(),
        held_out_rows(),
        embedding_model=embeddings,
        max_similar_examples=2,
        show_progress=False,
        report_options={"n_resamples": 200, "seed": 3},
    )


class Page(HTMLParser):
    """What the checks read off the page: confusion cells, diagram points, statistic rows."""

    def __init__(self) -> None:
        super().__init__()
        self.depth_in_section = 0
        self.sections: list[dict] = []
        self.figure: str | None = None
        self.cell: dict | None = None
        self.row: dict | None = None
        self.tags_in_section: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and "alignment" in (attrs.get("class") or "").split():
            self.depth_in_section = 1
            self.sections.append(
                {"metric": attrs["data-metric"], "confusion": {}, "points": [], "stats": {}}
            )
            return
        if not self.depth_in_section:
            return
        if tag == "section":
            self.depth_in_section += 1
        self.tags_in_section.append((tag, attrs))
        current = self.sections[-1]
        if tag == "figure" and "confusion" in attrs.get("class", ""):
            self.figure = attrs["data-series"]
            current["confusion"][self.figure] = {}
        if tag == "td" and "data-human" in attrs and self.figure:
            self.cell = {"key": (attrs["data-human"], attrs["data-judge"]), "text": ""}
        if tag == "circle" and "data-series" in attrs:
            current["points"].append(
                {
                    "series": attrs["data-series"],
                    "n": int(attrs["data-n"]),
                    "mean": float(attrs["data-mean-score"]),
                    "rate": float(attrs["data-positive-rate"]),
                    "cx": float(attrs["cx"]),
                    "cy": float(attrs["cy"]),
                }
            )
        if tag == "tr" and "data-statistic" in attrs:
            self.row = {"name": attrs["data-statistic"], "cells": {}, "open": None}
        if tag == "td" and self.row is not None:
            self.row["open"] = attrs.get("class") or "label"
            self.row["cells"][self.row["open"]] = ""

    def handle_endtag(self, tag):
        if not self.depth_in_section:
            return
        if tag == "section":
            self.depth_in_section -= 1
        if tag == "figure":
            self.figure = None
        if tag == "td" and self.cell is not None:
            self.sections[-1]["confusion"][self.figure][self.cell["key"]] = int(self.cell["text"])
            self.cell = None
        if tag == "td" and self.row is not None:
            self.row["open"] = None
        if tag == "tr" and self.row is not None:
            self.sections[-1]["stats"][self.row["name"]] = self.row["cells"]
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data
        if self.row is not None and self.row["open"]:
            self.row["cells"][self.row["open"]] += data


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


def by_hand_bins(pairs):
    """Ten equal-width bins over [0, 1]: n, mean score, share labelled yes, non-empty only."""
    bins: dict[int, list[tuple[float, int]]] = {}
    for score, label in pairs:
        bins.setdefault(min(int(score * 10), 9), []).append((score, label))
    return {
        b: (len(m), sum(s for s, _ in m) / len(m), sum(y for _, y in m) / len(m))
        for b, m in bins.items()
    }


def test_the_report_page_shows_the_alignment_with_hand_counted_figures(tmp_path, report):
    # Training rows: shown examples, 'indeed' rows say 0.5 and 'maybe' rows 0.3: the cut is 0.4.
    assert report.threshold == pytest.approx(0.4)
    assert report.before_threshold == pytest.approx(0.5)
    results = write_results(tmp_path / "results.jsonl")
    page = parse(build_report([results], sections=[report]))
    [section] = page.sections
    assert section["metric"] == "faithfulness"

    # Confusion matrices, counted by hand (rows: human, columns: judge).
    # before (>= 0.5): yes rows 0.82 0.71 0.64 yes, 0.44 0.23 no; no rows 0.61 yes, 3 no.
    assert section["confusion"]["before"] == {
        ("no", "no"): 3,
        ("no", "yes"): 1,
        ("yes", "no"): 2,
        ("yes", "yes"): 3,
    }
    # after (+0.1, >= 0.4): yes rows 0.92 0.81 0.54 0.74 yes, 0.33 no; no rows 0.71 yes, 3 no.
    assert section["confusion"]["after"] == {
        ("no", "no"): 3,
        ("no", "yes"): 1,
        ("yes", "no"): 1,
        ("yes", "yes"): 4,
    }

    # The reliability diagram: one point per non-empty bin, where the bin's numbers put it.
    before = [(p, y) for y, p in TEST_ROWS]
    after = [(min(1.0, p + SHIFT), y) for y, p in TEST_ROWS]
    for series, pairs in (("before", before), ("after", after)):
        expected = sorted(by_hand_bins(pairs).values())
        points = [p for p in section["points"] if p["series"] == series]
        shown = sorted((p["n"], p["mean"], p["rate"]) for p in points)
        assert len(shown) == len(expected)
        for got, want in zip(shown, expected, strict=True):
            assert got[0] == want[0] and got[1:] == pytest.approx(want[1:], abs=1e-5)
        for point in points:
            assert point["cx"] == pytest.approx(PAD + point["mean"] * SIZE, abs=0.06)
            assert point["cy"] == pytest.approx(PAD + (1 - point["rate"]) * SIZE, abs=0.06)
    # two rows share a bin on each side: 0.23 and 0.25 (before), 0.71 and 0.74 (after)
    assert (2, pytest.approx(0.24), 0.5) in [
        (p["n"], p["mean"], p["rate"]) for p in section["points"] if p["series"] == "before"
    ]

    # The statistics table: agreement 6/9 before, 7/9 after, the paired difference +1/9.
    agreement = section["stats"]["agreement"]
    assert agreement["before"].startswith(f"{6 / 9:.3f}")
    assert agreement["value"].startswith(f"{7 / 9:.3f}")
    assert agreement["difference"].startswith(f"{1 / 9:+.3f}")
    ece = sum(n / 9 * abs(rate - mean) for n, mean, rate in by_hand_bins(after).values())
    assert section["stats"]["ece"]["value"].startswith(f"{ece:.3f}")
    assert report.value("ece") == pytest.approx(ece)

    # The section is data only: nothing to run, nothing to fetch.
    tags = {tag for tag, _ in page.tags_in_section}
    assert "script" not in tags and "img" not in tags and "link" not in tags
    assert not any("src" in attrs or "href" in attrs for _, attrs in page.tags_in_section)


def test_a_saved_report_and_an_aligned_file_render_the_same_section(tmp_path, report):
    saved = report.to_json(tmp_path / "report.json")
    again = AlignmentReport.load(tmp_path / "report.json")
    assert again.to_dict() == json.loads(saved)
    assert again.__html__() == report.__html__()
    aligned = tmp_path / "aligned.json"
    aligned.write_text(json.dumps({"metric": {}, "alignment": {}, "report": report.to_dict()}))
    assert AlignmentReport.load(aligned).to_dict() == report.to_dict()
    assert again["correlation"] == report["correlation"]


def assay(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=120
    )


def in_process(*args: str):
    from typer.testing import CliRunner

    from assay.cli.app import app

    return CliRunner().invoke(app, list(args))


def test_the_command_takes_alignment_files_by_flag_or_as_a_source(tmp_path, report):
    report.to_json(tmp_path / "report.json")
    results = write_results(tmp_path / "results.jsonl")
    flagged = assay(
        "report",
        str(results),
        "--alignment",
        str(tmp_path / "report.json"),
        "-o",
        str(tmp_path / "a.html"),
    )
    assert flagged.returncode == 0, flagged.stderr
    page = (tmp_path / "a.html").read_text()
    [section] = parse(page).sections
    assert section["confusion"]["after"][("yes", "yes")] == 4
    assert page.index('id="metric-faithfulness"') < page.index('class="alignment"')
    alone = in_process("report", str(tmp_path / "report.json"), "-o", str(tmp_path / "b.html"))
    assert alone.exit_code == 0, alone.output
    only = (tmp_path / "b.html").read_text()
    assert len(parse(only).sections) == 1 and "<h2>Rows" not in only
    assert "assay report: alignment of faithfulness" in only


def test_bad_alignment_files_are_clear_errors(tmp_path, report):
    state_only = tmp_path / "state.json"
    state_only.write_text(json.dumps({"metric": {"class": "Faithfulness"}, "alignment": {}}))
    with pytest.raises(UsageError, match=r"without a held-out report.*--report"):
        AlignmentReport.load(state_only)
    broken = report.to_dict()
    broken["confusion"]["matrix"] = [[1, 2]]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(DataError, match="confusion") as caught:
        AlignmentReport.load(tmp_path / "broken.json")
    assert caught.value.field == "confusion"
    missing = report.to_dict()
    del missing["statistics"]["agreement"]["value"]
    (tmp_path / "missing.json").write_text(json.dumps(missing))
    with pytest.raises(DataError, match=r"statistics\.agreement"):
        AlignmentReport.load(tmp_path / "missing.json")
    with pytest.raises(UsageError, match="__html__"):
        build_report([write_results(tmp_path / "r.jsonl")], sections=["<b>not markup</b>"])
    done = in_process("report", "--alignment", str(state_only), "-o", str(tmp_path / "c.html"))
    assert isinstance(done.exception, UsageError)  # main() prints it as one line, exit code 2
    assert "held-out report" in str(done.exception)
    assert not (tmp_path / "c.html").exists()


def test_a_run_scored_by_an_aligned_judge_says_so(tmp_path):
    from assay.schema.dataset import EvaluationDataset
    from assay.schema.outcome import Ok
    from assay.schema.result import EvaluationResult

    dataset = EvaluationDataset.from_list(
        [
            {"response": "a", "retrieved_contexts": ["a"]},
            {"response": "b", "retrieved_contexts": ["b"]},
        ]
    )
    outcomes = [
        {
            "faithfulness": Ok(
                value=v, details={"alignment": {"threshold": 0.37, "passed": v >= 0.37}}
            )
        }
        for v in (0.2, 0.9)
    ]
    spec = [{"name": "faithfulness", "class": "Faithfulness", "version": "1", "params": {}}]
    path = tmp_path / "aligned.jsonl"
    EvaluationResult(dataset, spec, outcomes).to_jsonl(path)
    run = load_run(path)
    assert run.info["aligned judges"] == "faithfulness (threshold 0.37)"
    assert "aligned judges" not in load_run(write_results(tmp_path / "plain.jsonl")).info


def test_the_standalone_page_holds_the_same_section(tmp_path, report):
    page = report.to_html(tmp_path / "alone.html")
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert report.__html__().strip() in page
    assert Path(tmp_path / "alone.html").read_text(encoding="utf-8") == page


def test_notes_of_the_held_out_rows_travel_with_the_report(report):
    data = report.to_dict()
    data["notes"] = ["review export is one page (next_cursor 'abc')"]
    again = AlignmentReport.from_dict(data)
    assert again.notes == data["notes"]
    assert "next_cursor &#39;abc&#39;" in again.__html__()
    del data["notes"]
    assert AlignmentReport.from_dict(data).notes == []
