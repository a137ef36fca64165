"""A platform experiment that names no judge runs on the embedded local judge.

The experiment's judge_model is empty, so the server's worker falls back to `default_llm()`, the
in-process llama.cpp judge, here SmolLM2 (this package points ASSAY_LOCAL_MODEL at it); the
cohort generates with the embedded model too (`local`). Whatever the tiny model answers, every cell ends as a score or a typed
error with its cause; nothing is lost and nothing is NaN.
"""

from __future__ import annotations

import json

import pytest

from assay.models.local import SERVERS
from tests.local.conftest import CTX, PARALLEL, THREADS, needs_smollm2


@pytest.fixture
def platform(tmp_path, monkeypatch):
    from tests.platform.conftest import start_server, stop_server

    # The worker's default judge must reuse the package's one SmolLM2 server settings.
    monkeypatch.setenv("ASSAY_LOCAL_THREADS", str(THREADS))
    monkeypatch.setenv("ASSAY_LOCAL_CTX", str(CTX))
    monkeypatch.setenv("ASSAY_LOCAL_PARALLEL", str(PARALLEL))
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    server = start_server("sqlite", f"sqlite:///{tmp_path / 'assay.sqlite'}")
    try:
        yield server
    finally:
        stop_server(server)


@needs_smollm2
def test_an_experiment_with_nothing_configured_runs_on_the_embedded_judge(
    platform, monkeypatch, capfd
):
    from assay.models import defaults

    monkeypatch.setattr(defaults, "_told", set())  # the notice is printed once per process
    import assay.platform as ragmetrics
    from assay.platform import Cohort, Criteria, Dataset, Example, Experiment, Task

    assert ragmetrics.login(platform.key(), base_url=platform.base_url) is True
    dataset = Dataset(
        name="Capitals",
        examples=[
            Example(
                question="What is the capital of France?",
                ground_truth_context="Paris is the capital of France.",
                ground_truth_answer="Paris",
            ),
            Example(
                question="What is the capital of Italy?",
                ground_truth_context="Rome is the capital of Italy.",
                ground_truth_answer="Rome",
            ),
        ],
    )
    dataset.save()
    task = Task(name="QA", system_prompt="Answer in one short sentence.")  # no generator_model
    task.save()
    judged = Criteria(
        name="Correct",
        phase="generation",
        output_type="bool",
        criteria_type="llm_judge",
        header="Does the response name the right city?",
        bool_true="Yes",
        bool_false="No",
    )
    judged.save()
    # A cohort must name its generator (or a pipeline); "local" is the embedded model. The judge
    # is not named at all: the worker falls back to the default judge.
    experiment = Experiment(
        name="Defaults",
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="Local", generator_model="local")],
        criteria=[judged],
        judge_model="",
    )

    results = experiment.run(poll_interval=0.2)

    json.dumps(results, allow_nan=False)  # never NaN
    assert results["status"] == "completed", results.get("error")
    rows = results["rows"]
    assert len(rows) == 2
    for row in rows:
        cell = row["scores"]["Correct"]
        assert cell["status"] in {"ok", "error"}
        if cell["status"] == "error":
            assert cell["error_message"]  # a typed failure says why
        else:
            assert cell["value"] in (0, 1, 0.0, 1.0, True, False)
        assert row["generation_error"] is None and row["answer"].strip()
    assert list(results["scores"]) == ["Local"]
    assert results["scores"]["Local"]["Correct"]["n"] == 2
    # The judge was the default one, announced as such, on the embedded llama.cpp server.
    assert "using the embedded offline judge" in capfd.readouterr().err
    assert SERVERS.running() >= 1
