"""Experiments end to end: the seed's flow against a real server, its worker and the loopback fake
OpenAI server for both generation and judging."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from assay.platform import (
    Cohort,
    Criteria,
    Dataset,
    Example,
    Experiment,
    PlatformError,
    Task,
    ValidationFailed,
)
from tests.models.fake_openai import dynamic, error, ok

CAPITALS = {"France": "Paris", "Italy": "Rome", "Japan": "Tokyo", "Spain": "Madrid"}


def behaviour(latency: float = 0.0):
    """Generation: the capital when the cohort is 'smart' (its system prompt says so), else a shrug.
    Judging: 4/5 on the rubric, yes when the judged answer names a capital."""

    def choose(request):
        model = request.body.get("model") or ""
        text = json.dumps(request.messages)
        if not model:  # a body cut off mid-send (the client was killed)
            return error(400, "no model")
        if model == "broken":
            return error(400, "this model is broken")
        if model.startswith("gen"):
            smart = "smart" in text
            for country, capital in CAPITALS.items():
                if country in request.last_user_text:
                    return ok(
                        f"The capital is {capital}." if smart else "I am not sure.", latency=latency
                    )
            return ok("I am not sure.", latency=latency)
        if request.response_format_type or request.forced_tool or "JSON" in text:
            return ok('{"feedback": "relevant", "reason": "relevant", "score": 4}', latency=latency)
        judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
        named = judged is not None and any(
            capital in judged.group(1) for capital in CAPITALS.values()
        )
        return ok("yes" if named else "no", latency=latency)

    return dynamic(choose)


def seed_objects(fake, suffix=""):
    examples = [
        Example(
            question=f"What is the capital of {country}?",
            ground_truth_context=f"The capital of {country} is {capital}.",
            ground_truth_answer=capital,
        )
        for country, capital in CAPITALS.items()
    ]
    dataset = Dataset(name=f"Capitals{suffix}", examples=examples)
    dataset.save()
    task = Task(
        name=f"QA{suffix}",
        generator_model=fake.model_string("gen-default"),
        system_prompt="Answer briefly.",
    )
    task.save()
    relevance = Criteria(
        name="Relevance",
        phase="generation",
        output_type="5-point",
        criteria_type="llm_judge",
        header="How relevant is the response to the question?",
        likert_score_1="Not relevant at all",
        likert_score_2="Slightly relevant",
        likert_score_3="Moderately relevant",
        likert_score_4="Very relevant",
        likert_score_5="Completely relevant",
    )
    factual = Criteria(
        name="Factual Accuracy",
        phase="generation",
        output_type="bool",
        criteria_type="llm_judge",
        header="Is the answer factually correct?",
        bool_true="Yes, it is correct.",
        bool_false="No, it contains errors.",
    )
    names_capital = Criteria(
        name="Names a capital",
        phase="generation",
        output_type="bool",
        criteria_type="function",
        function_name="string_match",
        match_type="regex_match",
        match_pattern="paris|rome|tokyo|madrid",
        case_sensitive=False,
    )
    for criterion in (relevance, factual, names_capital):
        criterion.save()
    return dataset, task, [relevance, factual, names_capital]


def test_seed_flow_runs_with_live_progress(sdk, live, fake):
    fake.default = behaviour(latency=0.01)
    dataset, task, criteria = seed_objects(fake)
    cohorts = [
        Cohort(
            name="Smart", generator_model=fake.model_string("gen-a"), system_prompt="You are smart."
        ),
        Cohort(name="Plain", generator_model=fake.model_string("gen-b")),
    ]
    experiment = Experiment(
        name="Model Comparison",
        dataset=dataset,
        task=task,
        cohorts=cohorts,
        criteria=[criteria[0], "Factual Accuracy", criteria[2].id],
        judge_model=fake.model_string("judge"),
    )
    seen: list[dict] = []
    stop = threading.Event()

    def watch():
        client = live.client(sdk.login.__globals__["_client"].key)
        while not stop.is_set():
            if experiment.id is not None:
                seen.append(client.get(f"/experiments/{experiment.id}/progress").json())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        results = experiment.run(poll_interval=0.1)
    finally:
        stop.set()
        watcher.join()
    json.dumps(results, allow_nan=False)  # never NaN
    assert results["status"] == "completed" and results["error"] is None
    assert results["cohorts"] == ["Smart", "Plain"]
    assert results["criteria"] == ["Relevance", "Factual Accuracy", "Names a capital"]
    assert results["dataset"] == {"id": dataset.id, "version": 1}
    smart, plain = results["scores"]["Smart"], results["scores"]["Plain"]
    assert smart["Relevance"] == {
        "mean": 4.0,
        "n": 4,
        "n_scored": 4,
        "coverage": 1.0,
        "ci95": [4.0, 4.0],
    }
    assert smart["Factual Accuracy"]["mean"] == 1.0 and plain["Factual Accuracy"]["mean"] == 0.0
    assert smart["Names a capital"]["mean"] == 1.0 and plain["Names a capital"]["mean"] == 0.0
    assert len(results["summary"]) == 6 and len(results["rows"]) == 8
    first = results["rows"][0]
    assert first["cohort"] == "Smart" and first["question"] == "What is the capital of France?"
    assert first["answer"] == "The capital is Paris." and first["contexts"] == [
        "The capital of France is Paris."
    ]
    assert (
        first["scores"]["Factual Accuracy"]["status"] == "ok" and first["generation_error"] is None
    )
    assert [r["cohort"] for r in results["rows"]] == ["Smart"] * 4 + ["Plain"] * 4
    # progress: only ever up, and it reached 100 %
    done = [p["completed"] + p["failed"] for p in seen]
    assert (
        done == sorted(done) and seen and seen[-1]["percent"] == 100.0 and seen[-1]["total"] == 24
    )
    # generation: the cohort's model and system prompt override the task's; the context is given
    generations = [r for r in fake.chat_requests if r.body["model"].startswith("gen")]
    assert sorted(r.body["model"] for r in generations) == ["gen-a"] * 4 + ["gen-b"] * 4
    for request in generations:
        system = request.messages[0]["content"]
        assert system == (
            "You are smart." if request.body["model"] == "gen-a" else "Answer briefly."
        )
        assert "Context:" in request.last_user_text and "Question:" in request.last_user_text
    judged = [r for r in fake.chat_requests if r.body["model"] == "judge"]
    assert (
        len(judged) == 16
    )  # 2 cohorts × 4 examples × 2 judged criteria; the function criterion asks nobody
    # each generation is a trace
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        traces = (
            session.query(models.Trace).filter(models.Trace.experiment_id == experiment.id).all()
        )
        assert len(traces) == 8 and all(t.raw_input["messages"] for t in traces)


def test_failed_generations_are_typed_errors(sdk, fake):
    fake.default = behaviour()
    dataset, task, criteria = seed_objects(fake, "-broken")
    experiment = Experiment(
        name="broken",
        dataset=dataset.name,
        task=task.name,
        cohorts=[Cohort(name="Broken", generator_model=fake.model_string("broken"))],
        criteria=[c.name for c in criteria],
        judge_model=fake.model_string("judge"),
    )
    results = experiment.run(poll_interval=0.1)
    assert results["status"] == "completed"
    assert results["progress"]["failed"] == 12 and results["progress"]["completed"] == 0
    for line in results["summary"]:
        assert (
            line["mean"] is None
            and line["coverage"] == 0.0
            and line["n"] == 4
            and line["ci95"] is None
        )
    for row in results["rows"]:
        assert row["answer"] is None and row["generation_error"]["type"] == "ProviderError"
        for cell in row["scores"].values():
            assert cell["status"] == "error" and "could not be generated" in cell["message"]
    json.dumps(results, allow_nan=False)


def test_run_async_returns_a_future(sdk, fake):
    fake.default = behaviour()
    dataset, task, criteria = seed_objects(fake, "-async")
    experiment = Experiment(
        name="async",
        dataset=dataset,
        task=task,
        cohorts=[
            Cohort(name="Smart", generator_model=fake.model_string("gen"), system_prompt="smart")
        ],
        criteria=criteria[2:],
        judge_model="",
    )
    future = experiment.run_async()
    submitted = future.result(timeout=30)
    assert submitted["id"] == experiment.id and submitted["status"] == "queued"
    results = experiment.results(wait=True, poll_interval=0.05)
    assert (
        results["status"] == "completed"
        and results["scores"]["Smart"]["Names a capital"]["mean"] == 1.0
    )


def test_bad_experiments_are_refused_before_work(sdk, live, fake):
    dataset, task, criteria = seed_objects(fake, "-bad")
    with pytest.raises(ValidationFailed, match="exactly one"):
        Experiment(
            name="x",
            dataset=dataset,
            task=task,
            cohorts=[{"name": "c"}],
            criteria=criteria,
            judge_model="",
        )
    with pytest.raises(ValidationFailed, match="cohorts"):
        Experiment(
            name="x", dataset=dataset, task=task, cohorts=[], criteria=criteria, judge_model=""
        )
    with pytest.raises(PlatformError, match="no criteria named 'Nope'"):
        Experiment(
            name="x",
            dataset=dataset,
            task=task,
            cohorts=[Cohort(name="c", generator_model="m")],
            criteria=["Nope"],
            judge_model="",
        ).run()
    with pytest.raises(ValidationFailed, match=r"cohorts\[0\].rag_pipeline"):
        Experiment(
            name="x",
            dataset=dataset,
            task=task,
            cohorts=[Cohort(name="c", rag_pipeline="hyde")],
            criteria=criteria,
            judge_model="",
        ).run()
    with live.client(sdk.login.__globals__["_client"].key) as client:
        body = {
            "name": "x",
            "dataset_id": dataset.id,
            "task_id": task.id,
            "criteria_ids": [criteria[0].id],
            "cohorts": [
                {"name": "c", "generator_model": "m"},
                {"name": "c", "generator_model": "m"},
            ],
        }
        response = client.post("/experiments", json=body)
        assert (
            response.status_code == 422 and response.json()["error"]["field"] == "cohorts[1].name"
        )
        response = client.post("/experiments", json={**body, "cohorts": [], "criteria_ids": []})
        assert response.status_code == 422
        response = client.post(
            "/experiments", json={**body, "cohorts": body["cohorts"][:1], "criteria_ids": [1, 1]}
        )
        assert response.status_code in (404, 422)
        assert client.get("/experiments").json()["items"] == []  # nothing half-written


def test_a_dataset_pinned_by_an_experiment_cannot_be_deleted(sdk, live, fake):
    fake.default = behaviour()
    dataset, task, criteria = seed_objects(fake, "-pinned")
    Experiment(
        name="pin",
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="c", generator_model=fake.model_string("gen"))],
        criteria=criteria[2:],
        judge_model="",
    ).run(poll_interval=0.05)
    with live.client(sdk.login.__globals__["_client"].key) as client:
        response = client.delete(f"/datasets/{dataset.id}")
        assert (
            response.status_code == 409
            and "pinned by 1 experiment" in response.json()["error"]["message"]
        )
        assert client.get(f"/datasets/{dataset.id}").status_code == 200
