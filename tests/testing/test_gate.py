"""assert_scores, assert_case and assert_in_range on real results (classic metrics, and the
AspectCritic judged by the loopback judge of conftest.py)."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from typing import Any

import pytest
from scipy import stats

from assay import ExactMatch, evaluate, llm_factory
from assay.errors import BudgetExhausted, UsageError
from assay.metrics.general import AspectCritic
from assay.models import RetryPolicy
from assay.models.cache import CacheMiss, ResponseCache
from assay.schema.aggregate import bootstrap_mean_ci
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Error, Ok
from assay.schema.result import EvaluationResult
from assay.testing import (
    GateFailed,
    GateInconclusive,
    ReplayMiss,
    assert_case,
    assert_in_range,
    assert_scores,
    evaluate_repeated,
    mean_interval,
    parse_threshold,
    row_value,
)
from assay.testing.budget import BudgetedProvider, SharedBudget
from assay.testing.cache import RepeatCache

FAST = RetryPolicy(max_attempts=1)


def exact(passing: int, total: int) -> EvaluationResult:
    rows = [
        {"id": f"r{i}", "response": "a", "reference": "a" if i < passing else "b"}
        for i in range(total)
    ]
    return evaluate(rows, [ExactMatch()], show_progress=False)


def critic_rows(responses: list[str]) -> list[dict[str, str]]:
    return [
        {"id": f"r{i}", "user_input": f"question {i}", "response": text}
        for i, text in enumerate(responses)
    ]


CRITIC = AspectCritic(name="helpful", definition="Is the response helpful?")


# -- thresholds and intervals ---------------------------------------------------------------------
def test_thresholds_read_every_form_and_refuse_others_naming_the_metric():
    assert str(parse_threshold(">=0.80")) == ">=0.8"
    assert parse_threshold("≤ 0.1").op == "<=" and parse_threshold(0.7).op == ">="
    assert parse_threshold("<.5").cleared_by(0.4) and not parse_threshold(">0.5").cleared_by(0.5)
    with pytest.raises(UsageError, match=r"faithfulness: threshold '~0\.8'"):
        parse_threshold("~0.8", metric="faithfulness")
    with pytest.raises(UsageError, match="finite"):
        parse_threshold(float("nan"))


def test_intervals_are_scipys_and_the_librarys():
    votes = [1.0] * 44 + [0.0] * 6
    wilson = mean_interval(votes, ci=0.9)
    expected = stats.binomtest(44, 50).proportion_ci(confidence_level=0.9, method="wilson")
    assert wilson.method == "wilson" and (wilson.low, wilson.high) == (expected.low, expected.high)
    scores = [0.2, 0.9, 0.75, 0.6, 0.95, 0.8]
    boot = mean_interval(scores)
    assert boot.method == "bootstrap" and (boot.low, boot.high) == bootstrap_mean_ci(scores)
    t = mean_interval(scores, method="t")
    low, high = stats.t.interval(0.95, 5, loc=t.mean, scale=stats.sem(scores))
    assert t.low == pytest.approx(low) and t.high == pytest.approx(high)
    assert mean_interval([0.5]).low is None  # one continuous row: no interval
    with pytest.raises(UsageError, match="0 or 1"):
        mean_interval(scores, method="wilson")
    with pytest.raises(UsageError, match="ci must be"):
        mean_interval(scores, ci=95)


def test_a_rows_repeated_judgements_become_one_value_by_rule():
    assert row_value([1, 1, 0]) == 1.0 and row_value([0, 1]) == 0.5
    assert row_value([0.2, 0.5, 0.9], "median") == 0.5
    assert row_value([0.2, 0.4], "majority") == pytest.approx(0.3)  # numbers: the mean
    assert row_value([]) is None


# -- strict, lenient, inconclusive -------------------------------------------------------------
def test_strict_fails_what_the_interval_cannot_clear_and_says_why():
    result = exact(44, 50)  # 0.88, Wilson 95% [0.762, 0.944] straddles 0.80
    with pytest.raises(GateFailed) as caught:
        assert_scores(result, {"exact_match": ">=0.80"}, mode="strict")
    message = str(caught.value)
    assert "exact_match >=0.8: FAIL (inconclusive)" in message
    assert "mean 0.880" in message and "[0.762, 0.944] (wilson)" in message
    assert "50/50 rows" in message and "rows that miss >=0.8: row 44: 0" in message
    with pytest.warns(GateInconclusive, match=r"passed as inconclusive \(lenient\): exact_match"):
        (check,) = assert_scores(result, {"exact_match": ">=0.80"}, mode="lenient")
    assert (check.verdict, check.decision) == ("inconclusive", "pass")


def test_clear_pass_and_clear_fail_do_not_depend_on_the_mode():
    for mode in ("strict", "lenient"):
        (check,) = assert_scores(exact(50, 50), {"exact_match": ">=0.8"}, mode=mode)
        assert check.verdict == "pass" and check.low > 0.8
        with pytest.raises(GateFailed, match=r"FAIL \(fail\)"):
            assert_scores(exact(20, 50), {"exact_match": ">=0.8"}, mode=mode)


def test_below_thresholds_mirror_above_ones():
    result = exact(2, 50)  # an error-like rate of 0.04
    assert assert_scores(result, {"exact_match": "<=0.2"})[0].verdict == "pass"
    with pytest.raises(GateFailed):
        assert_scores(exact(30, 50), {"exact_match": "<0.2"}, mode="lenient")


def test_failed_cells_are_listed_and_count_against_coverage():
    data = EvaluationDataset.from_list([{"response": f"r{i}"} for i in range(4)])
    outcomes = [
        {"m": Ok(value=1.0)},
        {"m": Error(error_type="Timeout", message="no result within 5 s")},
        {"m": Ok(value=1.0)},
        {"m": Ok(value=1.0)},
    ]
    result = EvaluationResult(data, [{"name": "m"}], outcomes)
    with pytest.raises(GateFailed) as caught:
        assert_scores(result, {"m": ">=0.1"}, mode="lenient")
    message = str(caught.value)
    assert "3/4 rows" in message and "only 3 of 4 rows have a value" in message
    assert "1 failed cell(s): row 1: Timeout: no result within 5 s" in message
    (check,) = assert_scores(result, {"m": ">=0.1"}, mode="lenient", min_coverage=0.75)
    assert check.n_failed_cells == 1 and check.coverage == 0.75


def test_bad_arguments_are_usage_errors():
    result = exact(5, 5)
    with pytest.raises(UsageError, match="no metric 'faithfulness'"):
        assert_scores(result, {"faithfulness": ">=0.8"})
    with pytest.raises(UsageError, match="mode must be"):
        assert_scores(result, {"exact_match": 0.8}, mode="loose")
    with pytest.raises(UsageError, match="result must be"):
        assert_scores([1, 2], {"exact_match": 0.8})


def test_a_paired_baseline_fails_a_clear_regression_even_above_the_threshold():
    before, after = exact(50, 50), exact(40, 50)  # ten rows lost, still mean 0.8
    with pytest.raises(GateFailed, match="worse than the baseline") as caught:
        assert_scores(after, {"exact_match": ">=0.5"}, baseline=before)
    (check,) = caught.value.checks
    assert check.baseline["matched_by"] == "id" and check.baseline["n_pairs"] == 50
    assert check.baseline["mean_difference"] == pytest.approx(-0.2)
    assert assert_scores(before, {"exact_match": ">=0.5"}, baseline=after)[0].baseline[
        "direction"
    ] == ("higher")


# -- re-sampling with the judge ---------------------------------------------------------------------
def test_inconclusive_gates_judge_again_only_while_needed(judge_server, tmp_path):
    server, verdicts = judge_server
    responses = [f"good {i}" for i in range(16)] + [f"flaky {i}" for i in range(4)]
    for i in range(4):  # first judgement "no", then "yes": a majority of three passes
        verdicts.scripts[f"flaky {i}"] = ["no", "yes", "yes"]
    judge = llm_factory(server.model_string("judge"), cache=RepeatCache(tmp_path / "c.sqlite"))
    runs = evaluate_repeated(critic_rows(responses), [CRITIC], llm=judge)
    assert server.count == 20
    (check,) = assert_scores(runs, {"helpful": ">=0.6"}, repeats=3)
    # 16/20 first: Wilson [0.58, 0.92] straddles 0.6; judged twice more: 20/20 by majority
    assert check.repeats == 3 and check.mean == 1.0 and check.verdict == "pass"
    assert server.count == 60
    again = evaluate_repeated(critic_rows(responses), [CRITIC], llm=judge, repeats=3)
    assert server.count == 60  # every repeat's answers are cached under their own keys
    assert again.results[0]["helpful"][16] == 0  # repeat 0 replays its "no"
    assert assert_scores(again, {"helpful": ">=0.8"}, repeats=3)[0].repeats == 3


def test_repeats_judge_the_rows_read_once(judge_server, tmp_path):
    server, _ = judge_server
    judge = llm_factory(server.model_string("judge"), cache=RepeatCache(tmp_path / "c.sqlite"))
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in critic_rows(["good 0", "bad 1"])))
    runs = evaluate_repeated(str(data), [CRITIC], llm=judge)
    data.unlink()  # the file is read once: judging again needs the rows, not the file
    with pytest.warns(GateInconclusive):  # one row of two passes, however often judged
        (check,) = assert_scores(runs, {"helpful": ">=0.5"}, mode="lenient", repeats=3)
    assert check.repeats == 3 and [r["helpful"] for r in runs.results] == [[1, 0]] * 3
    assert server.count == 6


def test_a_result_without_its_dataset_is_decided_as_it_is():
    with pytest.warns(GateInconclusive):
        (check,) = assert_scores(exact(44, 50), {"exact_match": ">=0.8"}, mode="lenient", repeats=5)
    assert check.repeats == 1 and check.verdict == "inconclusive"


def test_a_replay_cache_miss_fails_the_gate_and_calls_nothing(judge_server, tmp_path):
    server, _ = judge_server
    path = tmp_path / "c.sqlite"
    recorder = llm_factory(server.model_string("judge"), cache=ResponseCache(path))
    evaluate(critic_rows(["good 0", "good 1"]), [CRITIC], llm=recorder, show_progress=False)
    assert server.count == 2
    replayer = llm_factory(
        server.model_string("judge"), cache=ResponseCache(path, replay_only=True), retry=FAST
    )
    replayed = evaluate(
        critic_rows(["good 0", "good 1"]), [CRITIC], llm=replayer, show_progress=False
    )
    assert replayed["helpful"] == [1, 1] and server.count == 2
    missed = evaluate(
        critic_rows(["good 0", "good 9"]), [CRITIC], llm=replayer, show_progress=False
    )
    assert server.count == 2  # the unrecorded row made no call
    assert missed.outcome(1, "helpful").error_type == "CacheMiss"
    with pytest.raises(ReplayMiss, match="missing from the replay cache"):
        assert_scores(missed, {"helpful": ">=0.1"}, mode="lenient", min_coverage=0)
    with pytest.raises(CacheMiss, match="no recorded chat answer"):
        ResponseCache(path, replay_only=True).get_response("0" * 64)


# -- single cases ---------------------------------------------------------------------------------
def test_assert_case_stops_once_the_majority_is_decided(judge_server, tmp_path):
    server, verdicts = judge_server
    judge = llm_factory(server.model_string("judge"), cache=RepeatCache(tmp_path / "c.sqlite"))
    sample = {"user_input": "q", "response": "good 0"}
    assert assert_case(sample, CRITIC, ">=0.5", repeats=3, llm=judge) == [1, 1]
    assert server.count == 2  # two passes out of three decide it
    verdicts.scripts["flaky"] = ["yes", "no", "no"]
    with pytest.raises(GateFailed) as caught:
        assert_case({"user_input": "q", "response": "flaky"}, CRITIC, 0.5, llm=judge)
    assert "failed by rule 'majority' over 3 of up to 3 judgement(s): 1, 0, 0" in str(caught.value)
    verdicts.scripts["flaky2"] = ["no", "yes"]
    flaky2 = {"user_input": "q", "response": "flaky2"}
    assert assert_case(flaky2, CRITIC, 0.5, rule="any", llm=judge) == [0, 1]
    with pytest.raises(GateFailed, match="rule 'all' over 1"):
        assert_case(flaky2, CRITIC, 0.5, rule="all", llm=judge)
    with pytest.raises(GateFailed, match="rule 'mean'"):
        assert_case(flaky2, CRITIC, 0.75, rule="mean", repeats=2, llm=judge)


def test_assert_in_range_reads_a_number_a_result_column_or_a_metric_result():
    assert_in_range(0.45, value=0.4, plus_or_minus=0.1)
    assert_in_range(exact(2, 5)["exact_match"], value=0.4, plus_or_minus=0.0)
    with pytest.raises(AssertionError, match=r"0.8000 \(mean over 5/5 rows\) is outside 0.4 ± 0.1"):
        assert_in_range(exact(4, 5)["exact_match"], value=0.4, plus_or_minus=0.1)
    with pytest.raises(UsageError, match="plus_or_minus"):
        assert_in_range(0.4, 0.4, -1)


def test_the_testing_surface_stays_out_of_the_library_and_light():
    code = (
        "import sys, assay, assay.engine, assay.models; loaded = set(sys.modules); "
        "import assay.testing; "
        "print(','.join(sorted(m for m in ('assay.testing', 'pytest_assay') if m in loaded)), end='|'); "
        "print(','.join(m for m in ('pytest', 'scipy', 'assay.platform') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert loaded.stdout.strip() == "|"  # the library never loads it; it loads no pytest or scipy


def _open_at_once(paths: list[str], barrier: Any, results: Any) -> None:
    for path in paths:  # every process opens the same new files at the same moment
        try:
            barrier.wait(timeout=60)
            cache = RepeatCache(path)
            cache.put_meta("opened", "yes")
            cache.close()
            budget = SharedBudget(path + ".budget", max_calls=100)
            budget.reserve()
            budget.close()
            results.put("ok")
        except Exception as exc:
            results.put(f"{type(exc).__name__}: {exc}")


OPENERS = 8
TRIALS = 12


def test_workers_opening_a_new_cache_and_budget_at_once_all_succeed(tmp_path):
    # Several xdist workers create the same new SQLite files at the same moment; setting WAL
    # mode then fails with "database is locked" without waiting, unless the open is retried.
    # Spawned, not forked: a fork of this many-threaded test process can inherit a held lock.
    context = multiprocessing.get_context("spawn")
    paths = [str(tmp_path / f"cache{trial}.sqlite") for trial in range(TRIALS)]
    barrier, results = context.Barrier(OPENERS), context.Queue()
    workers = [
        context.Process(target=_open_at_once, args=(paths, barrier, results), daemon=True)
        for _ in range(OPENERS)
    ]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=120) for _ in range(OPENERS * TRIALS)]
    finally:
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.kill()
    assert outcomes == ["ok"] * OPENERS * TRIALS
    for path in paths:
        assert SharedBudget(path + ".budget", max_calls=100).used()[0] == OPENERS


def test_a_usd_budget_stops_calls_once_spent(judge_server, tmp_path):
    server, _ = judge_server
    # 20 input tokens per call at $50,000 per million: one dollar a call
    llm = llm_factory(server.model_string("priced"), cache=False, price=(50_000, 0), retry=FAST)
    budget = SharedBudget(tmp_path / "budget.sqlite", max_usd=3.0)
    llm.provider = BudgetedProvider(llm.provider, budget, llm.price)
    for i in range(3):
        llm.generate(f"question {i}")
    assert budget.used() == (3, pytest.approx(3.0)) and server.count == 3
    with pytest.raises(BudgetExhausted, match=r"assay budget \$3 used up \(\$3.0000 spent"):
        llm.generate("one more")
    assert server.count == 3 and budget.used()[0] == 3  # refused calls are not counted


def test_a_repeat_is_a_new_question_to_the_judge_not_the_first_answer_again(judge_server, tmp_path):
    # the judge is deterministic (temperature 0 by default): were repeats the same request, a
    # seeded server would answer each the same and the repeats would measure nothing
    server, _ = judge_server
    judge = llm_factory(server.model_string("judge"), cache=RepeatCache(tmp_path / "c.sqlite"))
    evaluate_repeated(critic_rows(["good 0"]), [CRITIC], llm=judge, repeats=3)
    sent = [(r.body.get("seed"), r.body.get("temperature")) for r in server.requests]
    base_seed, base_temperature = sent[0]
    assert not base_temperature  # repeat 0 is the ordinary request
    assert sent[1:] == [((base_seed or 0) + 1, 0.7), ((base_seed or 0) + 2, 0.7)]
