"""@experiment: concurrent rows, per-row errors, incremental files, metadata, names."""

from __future__ import annotations

import asyncio
import json
import re
import threading

import anyio
import pytest

from assay import Dataset, MetricResult, experiment
from assay.errors import UsageError
from assay.experiments import Experiment, list_experiments

pytestmark = pytest.mark.anyio


def make_dataset(tmp_path, n=6, backend="inmemory"):
    return Dataset(
        "questions",
        backend=backend,
        root_dir=tmp_path,
        data=[{"id": f"q{i}", "n": i, "meta": {"tags": [i]}} for i in range(n)],
    )


def read_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_arun_writes_every_row_and_returns_them_in_dataset_order(tmp_path):
    @experiment(show_progress=False)
    async def double(row):
        await anyio.sleep(0.001 * (6 - row["n"]))  # later rows finish first
        return {**row, "double": row["n"] * 2}

    result = await double.arun(make_dataset(tmp_path), name="first")
    assert isinstance(result, Experiment) and repr(result) == "Experiment(name=first, len=6)"
    assert [row["double"] for row in result] == [0, 2, 4, 6, 8, 10]
    assert result[0] == {"id": "q0", "n": 0, "meta": {"tags": [0]}, "double": 0}
    lines = read_lines(tmp_path / "experiments" / "first.jsonl")
    assert sorted(line["index"] for line in lines) == list(range(6))
    assert all(line["status"] == "ok" for line in lines)
    assert list(Experiment.load("first", root_dir=tmp_path)) == list(result)


async def test_an_exception_in_one_row_is_recorded_and_the_others_finish(tmp_path):
    @experiment(show_progress=False)
    async def fragile(row):
        if row["n"] == 2:
            raise ValueError("bad row 2")
        return {**row, "ok": True}

    result = await fragile.arun(make_dataset(tmp_path), name="fragile")
    assert len(result) == 6
    assert result[2] == {
        "id": "q2",
        "n": 2,
        "meta": {"tags": [2]},
        "error": "ValueError: bad row 2",
    }
    assert [row.get("ok") for row in result] == [True, True, None, True, True, True]
    assert result.errors == [{"index": 2, "type": "ValueError", "message": "bad row 2"}]
    stored = [line for line in read_lines(result.path) if line["status"] == "error"]
    assert stored[0]["error"] == {"type": "ValueError", "message": "bad row 2"}
    assert stored[0]["input"]["id"] == "q2"
    assert result.metadata["n_errors"] == 1 and result.metadata["status"] == "finished"


async def test_results_are_on_disk_before_the_run_ends(tmp_path):
    seen: list[int] = []
    path = tmp_path / "experiments" / "incremental.jsonl"

    @experiment(max_concurrency=1, show_progress=False)
    async def look(row):
        seen.append(len(path.read_text(encoding="utf-8").splitlines()))
        return {"n": row["n"]}

    await look.arun(make_dataset(tmp_path, n=4), name="incremental")
    assert seen == [0, 1, 2, 3]  # each finished row was written before the next one started


async def test_extra_positional_and_keyword_arguments_reach_the_function(tmp_path):
    @experiment(show_progress=False)
    async def configured(row, model, temperature=0.0, *, suffix=""):
        return {"id": row["id"], "model": model + suffix, "temperature": temperature}

    result = await configured.arun(
        make_dataset(tmp_path, n=2), "gpt-x", name="args", temperature=0.1, suffix="!"
    )
    assert [row["model"] for row in result] == ["gpt-x!", "gpt-x!"]
    assert {row["temperature"] for row in result} == {0.1}
    assert result.metadata["params"] == {
        "args": ["gpt-x"],
        "kwargs": {"temperature": 0.1, "suffix": "!"},
    }


async def test_no_more_rows_than_max_concurrency_run_at_once(tmp_path):
    active = peak = 0

    @experiment(max_concurrency=3, show_progress=False)
    async def tracked(row):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.02)
        active -= 1
        return {"n": row["n"]}

    await tracked.arun(make_dataset(tmp_path, n=12), name="limited")
    assert peak == 3


def test_sync_functions_run_in_threads_and_run_works_without_a_loop(tmp_path):
    threads: set[str] = set()

    @experiment(max_concurrency=4, show_progress=False)
    def plain(row, offset):
        threads.add(threading.current_thread().name)
        return {"n": row["n"] + offset, "score": MetricResult(1.0, reason="fine")}

    result = plain.run(make_dataset(tmp_path, n=4), 10, name="sync")
    assert [row["n"] for row in result] == [10, 11, 12, 13]
    assert result[0]["score"] == {"value": 1.0, "reason": "fine"}
    assert threading.main_thread().name not in threads


async def test_run_inside_a_running_loop(tmp_path):
    @experiment(show_progress=False)
    async def echo(row):
        return {"n": row["n"]}

    assert (
        len(echo.run(make_dataset(tmp_path, n=3), name="nested")) == 3
    )  # does not touch this loop


def test_calling_the_decorated_function_calls_the_function(tmp_path):
    @experiment()
    async def add(row, k=1):
        return {"n": row["n"] + k}

    @experiment
    def bare(row):
        return {"n": row["n"]}

    assert asyncio.run(add({"n": 1}, k=2)) == {"n": 3}
    assert bare({"n": 5}) == {"n": 5} and bare.__name__ == "bare"


async def test_a_function_that_returns_no_dict_or_times_out_is_an_error_row(tmp_path):
    @experiment(timeout=0.2, show_progress=False)
    async def odd(row):
        if row["n"] == 0:
            return ["not", "a", "dict"]
        if row["n"] == 1:
            await anyio.sleep(5)
        if row["n"] == 2:
            return {"handle": object()}
        return {"n": row["n"]}

    result = await odd.arun(make_dataset(tmp_path, n=4), name="odd")
    errors = {e["index"]: e for e in result.errors}
    assert (
        errors[0]["type"] == "TypeError" and "must return a dict, got list" in errors[0]["message"]
    )
    assert errors[1]["type"] == "Timeout"
    assert errors[2]["type"] == "TypeError" and "object" in errors[2]["message"]
    assert result[3] == {"n": 3}


async def test_unnamed_runs_get_timestamped_names_that_never_collide(tmp_path):
    @experiment(name_prefix="baseline", show_progress=False)
    async def echo(row):
        return {"n": row["n"]}

    first = await echo.arun(make_dataset(tmp_path, n=1))
    second = await echo.arun(make_dataset(tmp_path, n=1))
    assert re.fullmatch(r"\d{8}-\d{6}-baseline", first.name)
    assert second.name != first.name and second.name.startswith(first.name[:8])
    named = await echo.arun(make_dataset(tmp_path, n=1), name="v2")
    assert named.name == "baseline-v2"


async def test_an_existing_name_is_refused_unless_overwrite(tmp_path):
    @experiment(show_progress=False)
    async def echo(row):
        return {"n": row["n"]}

    await echo.arun(make_dataset(tmp_path, n=2), name="same")
    with pytest.raises(UsageError, match="already exists"):
        await echo.arun(make_dataset(tmp_path, n=1), name="same")
    assert len(Experiment.load("same", root_dir=tmp_path)) == 2

    again = experiment(overwrite=True, show_progress=False)(echo.fn)
    await again.arun(make_dataset(tmp_path, n=1), name="same")
    assert len(Experiment.load("same", root_dir=tmp_path)) == 1


async def test_metadata_csv_copy_and_root_dir_of_the_dataset(tmp_path):
    @experiment(csv=True, show_progress=False)
    async def echo(row):
        return {**row, "score": row["n"] / 10}

    dataset = make_dataset(tmp_path, n=3, backend="local/csv")
    result = await echo.arun(dataset, name="with_csv")
    meta = json.loads((tmp_path / "experiments" / "with_csv.meta.json").read_text())
    assert meta["name"] == "with_csv" and meta["status"] == "finished" and meta["n_rows"] == 3
    assert meta["dataset"] == {"name": "questions", "backend": "local/csv", "rows": 3}
    assert meta["function"].endswith("echo") and meta["created"] and meta["finished"]
    csv_copy = Experiment.load(tmp_path / "experiments" / "with_csv.csv")
    assert list(csv_copy) == list(result)
    assert [entry["name"] for entry in list_experiments(tmp_path)] == ["with_csv"]


async def test_plain_lists_of_rows_work_and_bad_datasets_are_refused(tmp_path):
    @experiment(root_dir=tmp_path, show_progress=False)
    async def echo(row):
        return {"n": row["n"]}

    assert len(await echo.arun([{"n": 1}, {"n": 2}], name="listed")) == 2
    with pytest.raises(UsageError, match="not a dict"):
        await echo.arun([{"n": 1}, 5], name="bad")
    with pytest.raises(UsageError, match="single dict"):
        await echo.arun({"n": 1}, name="bad")
    with pytest.raises(UsageError, match="max_concurrency"):
        experiment(max_concurrency=0)


async def test_progress_is_shown_on_stderr(tmp_path, capsys):
    class Scorer:
        async def __call__(self, row):
            return {"n": row["n"]}

    runnable = experiment()(Scorer())  # an object with an async __call__ is awaited, not threaded
    await runnable.arun(make_dataset(tmp_path, n=3), name="shown")
    err = capsys.readouterr().err
    assert "Running experiment" in err and "shown" in err and "3/3" in err


async def test_a_csv_of_the_same_name_is_not_clobbered(tmp_path):
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "old_run.csv").write_text("id,score\n1,0.5\n", encoding="utf-8")

    @experiment(root_dir=tmp_path, show_progress=False)
    async def echo(row):
        return {"n": row["n"]}

    with pytest.raises(UsageError, match="already exists"):
        await echo.arun([{"n": 1}], name="old_run")
    assert (folder / "old_run.csv").read_text(encoding="utf-8") == "id,score\n1,0.5\n"
    assert list(Experiment.load("old_run", root_dir=tmp_path)) == [{"id": 1, "score": 0.5}]
