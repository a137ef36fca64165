"""Asking again (#42, 2): `evaluate(..., repeats=N)` asks each judged cell N times as N requests
of their own, and the cell's outcome summarises them; `result.stability()` and `assert_stable`
read that summary.

The rules of `combine` are pinned on scripted outcomes; the rest runs against the fake OpenAI
server on 127.0.0.1, whose request log says what was really sent.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import evaluate
from assay.engine.repeats import MAX_REPEATS, combine
from assay.errors import CheckpointMismatch, UsageError
from assay.metrics import BleuScore
from assay.models import RetryPolicy, llm_factory
from assay.models.asking import SAMPLING_TEMPERATURE
from assay.schema.outcome import Error, Ok, Skipped
from assay.testing import GateFailed, assert_stable
from tests.models.fake_openai import FakeOpenAI, dynamic, ok, serve
from tests.models.judge import JudgeMetric, row_of, verdict


# -- combine: the rules, on scripted askings ----------------------------------------------------
def test_numbers_give_their_mean_spread_and_whether_they_stayed_on_one_side():
    out = combine([Ok(value=0.0), Ok(value=1.0), Ok(value=1.0)])
    assert isinstance(out, Ok) and out.repeats is not None
    assert out.value == pytest.approx(2 / 3)
    assert out.repeats.mean == pytest.approx(2 / 3)
    assert out.repeats.spread == pytest.approx(statistics.stdev([0.0, 1.0, 1.0]))
    assert out.repeats.values == [0.0, 1.0, 1.0]
    assert (out.repeats.n, out.repeats.unanimous, out.repeats.failed) == (3, False, 0)
    same_side = combine([Ok(value=0.6), Ok(value=0.9)])
    assert same_side.repeats.unanimous and same_side.value == pytest.approx(0.75)
    alike = combine([Ok(value=0.25, reason="r")] * 3)
    assert alike.repeats.spread == 0.0 and alike.repeats.unanimous and alike.reason == "r"


def test_booleans_and_labels_take_the_majority_and_ties_the_first_asking():
    votes = combine([Ok(value=False), Ok(value=True), Ok(value=True)])
    assert votes.value is True and votes.repeats.mean == pytest.approx(2 / 3)
    assert not votes.repeats.unanimous
    tie = combine([Ok(value="curt", reason="first"), Ok(value="kind")])
    assert tie.value == "curt" and tie.reason == "first" and tie.repeats.mean is None
    likert = combine([Ok(value=4), Ok(value=4), Ok(value=5)])
    assert likert.value == pytest.approx(13 / 3) and not likert.repeats.unanimous


def test_failed_askings_are_counted_not_averaged_and_no_ok_means_the_first_failure():
    error = Error(error_type="ModelTimeout", message="slow")
    partly = combine([Ok(value=1.0), error, Ok(value=0.0)])
    assert partly.value == 0.5 and partly.repeats.failed == 1 and partly.repeats.n == 3
    assert combine([error, Error(error_type="X", message="y")]) == error
    skip = Skipped(reason="row has no response")
    assert combine([skip, skip]) == skip
    ranking = combine([Ok(value=[2, 1]), Ok(value=[1, 2])])
    assert ranking.value == [2, 1] and ranking.repeats.values == []


# -- evaluate(repeats=N) against a loopback judge -----------------------------------------------
@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def _judge(server: FakeOpenAI, **options):
    return llm_factory(
        server.model_string(), retry=RetryPolicy(max_attempts=1, initial_wait=0.01), **options
    )


def _by_seed(request):
    # the judge changes its mind with the seed on odd rows, and holds it on even ones
    seed = int(request.body.get("seed") or 0)
    row = row_of(request)
    return ok(verdict(0.9 if row % 2 == 0 or seed % 2 == 0 else 0.1), usage=(10, 2))


def test_each_asking_is_its_own_request_and_the_outcome_summarises_them(server, tmp_path):
    server.default = dynamic(_by_seed)
    data = [{"response": f"row-{i}", "reference": "row", "user_input": "q"} for i in range(4)]
    result = evaluate(
        data,
        [JudgeMetric(), BleuScore()],
        llm=_judge(server, cache=str(tmp_path / "cache.db")),
        repeats=3,
        show_progress=False,
    )
    sent = server.chat_requests
    assert len(sent) == 4 * 3  # the judged metric asked 3 times; BLEU has no judge
    assert sorted(r.body.get("seed") or 0 for r in sent) == sorted([0, 1, 2] * 4)
    assert {r.body["temperature"] for r in sent} == {SAMPLING_TEMPERATURE}
    steady, fickle = result.outcome(0, "judge"), result.outcome(1, "judge")
    assert steady.repeats.values == [0.9, 0.9, 0.9] and steady.repeats.unanimous
    assert sorted(fickle.repeats.values) == [0.1, 0.9, 0.9] and not fickle.repeats.unanimous
    assert fickle.value == pytest.approx((0.1 + 0.9 + 0.9) / 3)
    assert result.outcome(0, "bleu_score").repeats is None  # asked once
    assert result.usage("judge").requests == 12
    [judged, bleu] = result.stability()
    assert (judged.cells, judged.unanimous, judged.flipped) == (4, 2, 2)
    assert bleu.cells == 0
    assert "2 of 4 cells unanimous (2 flipped)" in judged.line()

    # asked again with the same cache: every asking answered as before, nothing sent
    server.reset_records()
    again = evaluate(
        data,
        [JudgeMetric()],
        llm=_judge(server, cache=str(tmp_path / "cache.db")),
        repeats=3,
        show_progress=False,
    )
    assert server.count == 0
    assert again.outcome(1, "judge").repeats.values == fickle.repeats.values


def test_one_asking_sends_the_request_as_before(server):
    server.default = dynamic(_by_seed)
    result = evaluate(
        [{"response": "row-1"}],
        [JudgeMetric()],
        llm=_judge(server, cache=False),
        show_progress=False,
    )
    [request] = server.chat_requests
    assert "seed" not in request.body and request.body["temperature"] == 0.0
    assert result.outcome(0, "judge").repeats is None


def test_gate_on_stability(server):
    server.default = dynamic(_by_seed)
    data = [{"response": f"row-{i}"} for i in range(4)]
    result = evaluate(
        data, [JudgeMetric()], llm=_judge(server, cache=False), repeats=3, show_progress=False
    )
    [checked] = assert_stable(result, min_unanimous=0.5)
    assert checked.share_unanimous == 0.5
    with pytest.raises(
        GateFailed, match=r"judge: 2 of 4 cells unanimous.*50% unanimous, below 90%"
    ):
        assert_stable(result, min_unanimous=0.9)
    with pytest.raises(GateFailed, match="spread"):
        assert_stable(result, min_unanimous=0.5, max_spread=0.1)
    once = evaluate(data, [JudgeMetric()], llm=_judge(server, cache=False), show_progress=False)
    with pytest.raises(UsageError, match="repeats=3"):
        assert_stable(once)


def test_a_run_directory_remembers_how_often_its_cells_were_asked(server, tmp_path: Path):
    server.default = dynamic(_by_seed)
    data = [{"response": "row-1"}]
    llm = _judge(server, cache=False)
    evaluate(data, [JudgeMetric()], llm=llm, run_dir=tmp_path / "run", show_progress=False)
    with pytest.raises(CheckpointMismatch):
        evaluate(
            data,
            [JudgeMetric()],
            llm=llm,
            run_dir=tmp_path / "run",
            repeats=3,
            show_progress=False,
        )
    evaluate(
        data, [JudgeMetric()], llm=llm, run_dir=tmp_path / "run3", repeats=3, show_progress=False
    )
    server.reset_records()
    resumed = evaluate(
        data, [JudgeMetric()], llm=llm, run_dir=tmp_path / "run3", repeats=3, show_progress=False
    )
    assert server.count == 0 and resumed.outcome(0, "judge").repeats.n == 3


@pytest.mark.parametrize("bad", [0, -1, MAX_REPEATS + 1, 2.0, True, "3"])
def test_repeats_out_of_range_is_refused_before_any_work(server, bad):
    with pytest.raises(UsageError, match="repeats"):
        evaluate([{"response": "row-1"}], [JudgeMetric()], llm=_judge(server), repeats=bad)
    assert server.count == 0
