"""The pytest plugin, run as a user runs it: inner pytest sessions (pytester) judged by the
loopback judge of conftest.py through the real client, cache and engine."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.testing.conftest import QUIET_PLUGINS, inner, judge_args

GATES = """
def test_gate_passes(assay_evaluate):
    runs = assay_evaluate(rows(9, 1), [CRITIC])
    assert_scores(runs, {"helpful": ">=0.5"})

def test_gate_fails(assay_evaluate):
    runs = assay_evaluate(rows(2, 8), [CRITIC])
    assert_scores(runs, {"helpful": ">=0.8"})
"""


def properties(xml_path) -> dict[str, dict[str, str]]:
    """testcase name -> {property name: value} from a JUnit XML file."""
    tree = ET.parse(xml_path)
    return {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in tree.iter("testcase")
    }


def _normalised(output: str) -> list[str]:
    """Session output without what differs between two identical runs (plugin list, timing)."""
    return [
        re.sub(r" in [0-9.]+s", " in Ns", line)
        for line in output.splitlines()
        if not line.startswith(("plugins:", "rootdir:"))
    ]


def test_a_session_that_does_not_use_assay_gets_nothing_from_it(pytester):
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_plain(pytestconfig):
            loaded = sorted(m for m in sys.modules if m == "assay" or m.startswith("assay."))
            assert loaded == [], loaded
            print("assay plugin loaded:", pytestconfig.pluginmanager.has_plugin("assay"))
        """
    )
    before = sorted(p.name for p in pytester.path.iterdir())
    with_plugin = pytester.runpytest_subprocess(*QUIET_PLUGINS, "-s", "--junitxml=a.xml")
    with_plugin.assert_outcomes(passed=1)
    assert "assay plugin loaded: True" in with_plugin.stdout.str()
    without = pytester.runpytest_subprocess(
        *QUIET_PLUGINS, "-s", "-p", "no:assay", "--junitxml=b.xml"
    )
    assert "assay plugin loaded: False" in without.stdout.str()
    assert _normalised(with_plugin.stdout.str().replace("loaded: True", "loaded: X")) == (
        _normalised(
            without.stdout.str().replace("loaded: False", "loaded: X").replace("b.xml", "a.xml")
        )
    )
    assert with_plugin.stderr.str() == without.stderr.str() == ""
    created = {p.name for p in pytester.path.iterdir()} - set(before) - {"a.xml", "b.xml"}
    # only pytester's own (the subprocesses' base temp directories and captured output)
    assert all(name.startswith("runpytest-") or name in ("stdout", "stderr") for name in created)
    assert not (pytester.path / ".assay").exists()
    assert "<property" not in (pytester.path / "a.xml").read_text()
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    for option in ("--assay-cache=", "--assay-budget=", "--assay-baseline=", "--assay-summary="):
        assert option in help_text


def test_gates_show_in_junit_the_summary_and_the_report(
    pytester, judge_server, tmp_path, monkeypatch
):
    server, _ = judge_server
    step_summary = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    pytester.makepyfile(test_inner=inner(GATES))
    result = pytester.runpytest(
        *judge_args(server, tmp_path),
        "--junitxml=junit.xml",
        "--assay-summary=summary.md",
        "--assay-report=report.json",
    )
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "helpful >=0.8: FAIL (fail)  mean 0.200, 95% interval [0.057, 0.510] (wilson)" in output
    assert "2 judged test(s): 1 passed, 1 failed; judge calls 18, cache hits 2" in output
    props = properties(pytester.path / "junit.xml")
    passed = props["test_gate_passes"]
    assert passed["assay.helpful.score"] == "0.9"
    assert passed["assay.helpful.interval"] == "[0.5958, 0.9821]"
    assert passed["assay.helpful.rows"] == "10/10" and passed["assay.helpful.decision"] == "pass"
    assert passed["assay.judge_calls"] == "10" and passed["assay.cache_hits"] == "0"
    assert "assay.cost_usd" in passed and "assay.record" not in passed
    # the second test shares two rows with the first: answered from the cache
    assert props["test_gate_fails"]["assay.cache_hits"] == "2"
    summary = (pytester.path / "summary.md").read_text()
    assert "| `test_inner.py::test_gate_fails` | helpful | >=0.8 | 0.200 |" in summary
    assert "2 test(s): 1 passed, 1 failed, 0 skipped · judge calls 18 · cache hits 2" in summary
    assert step_summary.read_text() == summary
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["format"] == "assay-pytest-report" and report["totals"]["judge_calls"] == 18
    entry = report["tests"]["test_inner.py::test_gate_fails"]
    assert entry["outcome"] == "failed" and entry["checks"][0]["rows"][0] == {
        "id": "r0",
        "value": 1.0,
    }


def test_record_then_replay_is_free_and_a_changed_call_fails_clearly(
    pytester, judge_server, tmp_path
):
    server, _ = judge_server
    pytester.makepyfile(test_inner=inner(GATES))
    recorded = pytester.runpytest(
        *judge_args(server, tmp_path, "--assay-cache=record"), "--junitxml=a.xml"
    )
    recorded.assert_outcomes(passed=1, failed=1)
    calls = server.count
    assert calls == 18
    replayed = pytester.runpytest(
        *judge_args(server, tmp_path, "--assay-cache=replay"), "--junitxml=b.xml"
    )
    replayed.assert_outcomes(passed=1, failed=1)
    assert server.count == calls  # no judge call at all
    first, second = properties(pytester.path / "a.xml"), properties(pytester.path / "b.xml")
    for name in first:
        assert first[name]["assay.helpful.score"] == second[name]["assay.helpful.score"]
        assert first[name]["assay.helpful.decision"] == second[name]["assay.helpful.decision"]
    assert second["test_gate_passes"]["assay.cache_hits"] == "10"
    assert second["test_gate_passes"]["assay.judge_calls"] == "0"

    pytester.makepyfile(
        test_inner=inner(
            """
            def test_changed(assay_evaluate):
                new = [{"user_input": "new", "response": f"good new {i}"} for i in range(3)]
                runs = assay_evaluate(new, [CRITIC])
                runs.results[0]  # the test itself does not gate: the plugin still fails it

            def test_changed_case(assay_judge):
                assert_case({"user_input": "new", "response": "good new"}, CRITIC, 0.5)
            """
        )
    )
    missed = pytester.runpytest(*judge_args(server, tmp_path, "--assay-cache=replay"))
    missed.assert_outcomes(failed=2)
    assert server.count == calls
    output = missed.stdout.str()
    assert "assay replay: 3 judge call(s) were not in the replay cache" in output
    assert "Run once with --assay-cache=record" in output
    assert "CacheMiss: replay-only cache" in output  # assert_case names the miss


def test_the_marker_sets_defaults_and_repeats_resolve_inconclusive_gates(
    pytester, judge_server, tmp_path
):
    server, verdicts = judge_server
    for i in range(3):
        verdicts.scripts[f"flaky {i}"] = ["no", "yes", "yes"]
    pytester.makepyfile(
        test_inner=inner(
            """
            import pytest

            @pytest.mark.assay(mode="lenient", repeats=1)
            def test_lenient(assay_evaluate):
                check, = assert_scores(assay_evaluate(rows(8, 2), [CRITIC]), {"helpful": ">=0.8"})
                assert check.verdict == "inconclusive" and check.repeats == 1

            def test_repeats(assay_evaluate):
                runs = assay_evaluate(rows(12, 0, 3), [CRITIC])
                check, = assert_scores(runs, {"helpful": ">=0.75"})
                assert check.repeats == 3 and check.mean == 1.0

            @pytest.mark.assay(strictness=3)
            def test_bad_marker(assay_judge):
                pass
            """
        )
    )
    result = pytester.runpytest(*judge_args(server, tmp_path, "--assay-repeats=3"))
    result.assert_outcomes(passed=2, errors=0, failed=1)
    assert "@pytest.mark.assay takes mode=, ci=, method=, repeats=; got ['strictness']" in (
        result.stdout.str()
    )
    # test_lenient: the marker's repeats=1 wins over --assay-repeats=3, so one judgement;
    # test_repeats: 12/15 first (Wilson [0.55, 0.93] straddles 0.75), then every row twice more
    assert verdicts.asked["flaky 0"] == 3 and verdicts.asked["bad answer 0"] == 1


def test_budget_calls_are_never_exceeded_and_the_test_says_so(pytester, judge_server, tmp_path):
    server, _ = judge_server
    pytester.makepyfile(
        test_inner=inner(
            """
            def test_first(assay_evaluate, assay_budget):
                assert_scores(assay_evaluate(rows(6, 0), [CRITIC]), {"helpful": ">=0.5"})
                assert assay_budget.used()[0] == 6 and assay_budget.max_calls == 8

            def test_second(assay_evaluate):
                assert_scores(assay_evaluate(rows(0, 6), [CRITIC]), {"helpful": "<=0.5"})
            """
        )
    )
    result = pytester.runpytest(*judge_args(server, tmp_path, "--assay-budget=calls:8"))
    result.assert_outcomes(passed=1, failed=1)
    assert server.count == 8
    assert "BudgetExhausted: assay budget calls:8 used up" in result.stdout.str()


def test_a_baseline_report_catches_a_regression_the_threshold_lets_through(
    pytester, judge_server, tmp_path, monkeypatch
):
    server, _ = judge_server
    pytester.makepyfile(
        test_inner=inner(
            """
            import os

            def test_quality(assay_evaluate):
                good = int(os.environ["GOOD_ROWS"])
                runs = assay_evaluate(rows(good, 40 - good), [CRITIC])
                assert_scores(runs, {"helpful": ">=0.3"}, mode="lenient")
            """
        )
    )
    monkeypatch.setenv("GOOD_ROWS", "40")
    pytester.runpytest(*judge_args(server, tmp_path, "--assay-report=main.json")).assert_outcomes(
        passed=1
    )
    monkeypatch.setenv("GOOD_ROWS", "25")
    result = pytester.runpytest(*judge_args(server, tmp_path, "--assay-baseline=main.json"))
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "worse than the baseline" in output
    assert "vs baseline: -0.375" in output and "over 40 paired rows (lower)" in output


def test_bad_options_are_usage_errors_naming_the_option(pytester, tmp_path):
    pytester.makepyfile(test_inner="def test_x():\n    pass\n")
    result = pytester.runpytest(*QUIET_PLUGINS, "--assay-budget=lots")
    assert "--assay-budget: expected USD (e.g. 2.50) or calls:N" in result.stderr.str()
    result = pytester.runpytest(*QUIET_PLUGINS, "--assay-repeats=0")
    assert "--assay-repeats: expected a whole number of 1 or more" in result.stderr.str()
    (tmp_path / "other.json").write_text('{"tests": {}}')
    result = pytester.runpytest(*QUIET_PLUGINS, f"--assay-baseline={tmp_path / 'other.json'}")
    assert "is not an assay report" in result.stderr.str()


XDIST_GATES = """
import pytest

@pytest.mark.parametrize("group", range(4))
def test_group(assay_evaluate, group):
    good = 5 if group % 2 == 0 else 0
    responses = [f"good {group}-{i}" for i in range(good)] + [f"bad {group}-{i}" for i in range(5 - good)]
    data = [{"id": f"g{group}r{i}", "user_input": "q", "response": r} for i, r in enumerate(responses)]
    assert_scores(assay_evaluate(data, [CRITIC]), {"helpful": ">=0.5"}, mode="lenient")
"""


def test_xdist_shares_one_cache_and_merges_one_report_with_serial_verdicts(
    pytester, judge_server, tmp_path
):
    server, _ = judge_server
    pytester.makepyfile(test_inner=inner(XDIST_GATES))
    parallel = pytester.runpytest_subprocess(
        *judge_args(server, tmp_path, "--assay-report=report.json", "--assay-summary=summary.md"),
        "-n",
        "2",
        "--junitxml=parallel.xml",
        timeout=120,
    )
    parallel.assert_outcomes(passed=2, failed=2)
    assert server.count == 20
    assert "4 judged test(s): 2 passed, 2 failed; judge calls 20, cache hits 0" in (
        parallel.stdout.str()
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert sorted(report["tests"]) == [f"test_inner.py::test_group[{g}]" for g in range(4)]
    assert report["totals"]["judge_calls"] == 20
    assert (pytester.path / "summary.md").read_text().count("| `test_inner.py::test_group[") == 4
    # the same tests, serial, replayed from the cache the two workers wrote: same verdicts
    serial = pytester.runpytest(
        *judge_args(server, tmp_path, "--assay-cache=replay"), "--junitxml=serial.xml"
    )
    serial.assert_outcomes(passed=2, failed=2)
    assert server.count == 20
    first, second = (
        properties(pytester.path / "parallel.xml"),
        properties(pytester.path / "serial.xml"),
    )
    assert sorted(first) == sorted(second) and len(first) == 4
    for name, props in first.items():
        for key in ("assay.helpful.score", "assay.helpful.interval", "assay.helpful.decision"):
            assert props[key] == second[name][key]
        assert second[name]["assay.judge_calls"] == "0" and second[name]["assay.cache_hits"] == "5"


@pytest.mark.slow  # a second xdist session: workers take several seconds each to import the library
def test_one_budget_for_all_xdist_workers_is_never_exceeded(pytester, judge_server, tmp_path):
    server, _ = judge_server
    pytester.makepyfile(test_inner=inner(XDIST_GATES))
    parallel = pytester.runpytest_subprocess(
        *judge_args(server, tmp_path, "--assay-cache=off", "--assay-budget=calls:13"),
        "-n",
        "2",
        timeout=120,
    )
    assert server.count == 13  # 20 calls needed, 13 allowed across both workers
    assert "BudgetExhausted: assay budget calls:13 used up" in parallel.stdout.str()
    assert parallel.parseoutcomes()["failed"] >= 1
