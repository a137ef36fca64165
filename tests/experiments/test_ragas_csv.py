"""The CSV Ragas' `local/csv` backend leaves after an `@experiment` run, read back with pandas."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from assay.experiments import Dataset, Experiment, experiment, list_experiments

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.anyio

# "Run your first experiment" (docs: getstarted/experiments_quickstart), `ragas` -> `assay`.
HELLO_WORLD = textwrap.dedent(
    """
    import numpy as np
    from assay import Dataset, experiment
    from assay.metrics import MetricResult, discrete_metric

    # Define a custom metric for accuracy
    @discrete_metric(name="accuracy_score", allowed_values=["pass", "fail"])
    def accuracy_score(response: str, expected: str):
        result = "pass" if expected.lower().strip() == response.lower().strip() else "fail"
        return MetricResult(value=result, reason=f"Match: {result == 'pass'}")

    # Mock application endpoint that simulates an AI application response
    def mock_app_endpoint(**kwargs) -> str:
        return np.random.choice(["Paris", "4", "Blue Whale", "Einstein", "Python"])

    # Create an experiment that uses the mock application endpoint and the accuracy metric
    @experiment()
    async def run_experiment(row):
        response = mock_app_endpoint(query=row.get("query"))
        accuracy = accuracy_score.score(response=response, expected=row.get("expected_output"))
        return {**row, "response": response, "accuracy": accuracy.value}

    if __name__ == "__main__":
        import asyncio

        # Create dataset inline
        dataset = Dataset(name="test_dataset", backend="local/csv", root_dir=".")
        test_data = [
            {"query": "What is the capital of France?", "expected_output": "Paris"},
            {"query": "What is 2 + 2?", "expected_output": "4"},
            {"query": "What is the largest animal?", "expected_output": "Blue Whale"},
            {"query": "Who developed the theory of relativity?", "expected_output": "Einstein"},
            {"query": "What programming language is named after a snake?", "expected_output": "Python"},
        ]
        for sample in test_data:
            dataset.append(sample)
        dataset.save()

        # Run experiment
        _ = asyncio.run(run_experiment.arun(dataset, name="first_experiment"))
    """
)

QUERIES = [
    "What is the capital of France?",
    "What is 2 + 2?",
    "What is the largest animal?",
    "Who developed the theory of relativity?",
    "What programming language is named after a snake?",
]


def test_hello_world_leaves_the_csv_the_docs_read(tmp_path):
    (tmp_path / "hello_world.py").write_text(HELLO_WORLD, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "hello_world.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "datasets" / "test_dataset.csv").is_file()
    assert (tmp_path / "experiments" / "first_experiment.csv").is_file()

    frame = pd.read_csv(tmp_path / "experiments" / "first_experiment.csv")
    assert list(frame.columns) == ["query", "expected_output", "response", "accuracy"]
    assert list(frame["query"]) == QUERIES  # dataset order, one row each
    expected = [str(value) for value in frame["expected_output"]]
    assert expected == ["Paris", "4", "Blue Whale", "Einstein", "Python"]
    responses = [str(value) for value in frame["response"]]
    assert set(responses) <= {"Paris", "4", "Blue Whale", "Einstein", "Python"}
    verdicts = ["pass" if r == e else "fail" for r, e in zip(responses, expected, strict=True)]
    assert list(frame["accuracy"]) == verdicts

    # assay's own readers see the run once, from its JSONL, with the same rows
    assert [(e["name"], e["n_rows"]) for e in list_experiments(tmp_path)] == [
        ("first_experiment", 5)
    ]
    again = Experiment.load("first_experiment", root_dir=tmp_path)
    assert again.path is not None and again.path.suffix == ".jsonl"
    assert [row["response"] for row in again] == responses
    assert [row["accuracy"] for row in again] == verdicts


async def test_every_run_writes_the_csv_unless_told_not_to(tmp_path):
    @experiment(show_progress=False)
    async def score(row):
        if row["n"] == 2:
            raise ValueError("no score for two")
        return {**row, "score": row["n"] / 10, "verdict": {"value": "pass"}}

    rows = [{"n": n, "text": f"t{n}"} for n in range(4)]
    default = Dataset("numbers", root_dir=tmp_path)  # the default backend, local/csv
    default.extend(rows)
    await score.arun(default, name="default_backend")
    in_memory = Dataset.from_list(rows, name="numbers")
    plain = experiment(root_dir=tmp_path, show_progress=False)(score.fn)
    await plain.arun(in_memory, name="from_list")
    await plain.arun(rows, name="plain_rows")

    for name in ("default_backend", "from_list", "plain_rows"):
        frame = pd.read_csv(tmp_path / "experiments" / f"{name}.csv")
        assert list(frame.columns) == ["n", "text", "score", "verdict", "error"]
        assert list(frame["n"]) == [0, 1, 2, 3]
        assert list(frame["score"].isna()) == [False, False, True, False]
        assert frame.loc[2, "error"] == "ValueError: no score for two"
        assert frame["error"].isna().sum() == 3
        assert json.loads(frame.loc[0, "verdict"]) == {"value": "pass"}  # nested: JSON text

    names = [entry["name"] for entry in list_experiments(tmp_path)]
    assert sorted(names) == ["default_backend", "from_list", "plain_rows"]
    loaded = Experiment.load("plain_rows", root_dir=tmp_path)
    assert len(loaded) == 4 and [e["index"] for e in loaded.errors] == [2]

    quiet = experiment(root_dir=tmp_path, csv=False, show_progress=False)(score.fn)
    await quiet.arun(rows, name="no_csv")
    assert (tmp_path / "experiments" / "no_csv.jsonl").is_file()
    assert not (tmp_path / "experiments" / "no_csv.csv").exists()


async def test_a_rerun_with_overwrite_replaces_the_csv(tmp_path):
    @experiment(root_dir=tmp_path, overwrite=True, show_progress=False)
    async def echo(row):
        return {**row, "twice": row["n"] * 2}

    await echo.arun([{"n": n} for n in range(5)], name="again")
    await echo.arun([{"n": 7}], name="again")
    frame = pd.read_csv(tmp_path / "experiments" / "again.csv")
    assert frame.to_dict(orient="records") == [{"n": 7, "twice": 14}]
    assert len(Experiment.load("again", root_dir=tmp_path)) == 1
