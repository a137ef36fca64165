"""`assay benchmark --engine ragas`: the worker process, the judge and embeddings endpoints, the
record, resuming, and the merged table, with a stand-in Ragas package (see fake_ragas.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from assay.benchmark.ragas_side import (
    WORKER,
    embeddings_endpoint,
    judge_endpoint,
    ragas_metric_class,
    ragas_python,
    run_ragas_benchmark,
)
from assay.benchmark.report import merge_results, result_stem, side_by_side_markdown, write_record
from assay.benchmark.runner import load_suite, run_benchmark
from assay.errors import UsageError
from assay.metrics import Faithfulness
from assay.models.embeddings import Embeddings
from assay.models.factory import llm_factory
from assay.models.llm import LLM
from assay.models.providers.scripted import ScriptedProvider
from tests.benchmark.fake_ragas import ScoreJudge, make_fake_ragas


def _rows(metaeval_dir, aspect_metric: str, limit: int):
    return load_suite(
        "wikieval",
        aspect_metric,
        data_dir=metaeval_dir,
        aspect=None,
        split="test",
        limit=limit,
        seed=0,
    )[1].rows


def _run(metaeval_dir, tmp_path, judge: ScoreJudge, **options):
    return run_ragas_benchmark(
        "wikieval",
        "faithfulness",
        python=make_fake_ragas(tmp_path),
        data_dir=metaeval_dir,
        llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
        limit=3,
        runs_dir=tmp_path / "runs",
        show_progress=False,
        **options,
    )


def test_scores_the_same_items_and_records_every_failure(metaeval_dir, tmp_path):
    rows = _rows(metaeval_dir, "faithfulness", 3)
    responses = [row["response"] for row in rows]  # pairs: (0, 1), (2, 3), (4, 5), preferred first
    scores = {
        responses[0]: "0.9",
        responses[1]: "0.2",
        responses[2]: "0.4",
        responses[3]: "0.8",
        responses[4]: "nan",
    }
    with ScoreJudge(scores, fail={responses[5]}) as judge:
        record = _run(metaeval_dir, tmp_path, judge)
        requests = judge.count

    assert record["engine"]["name"] == "ragas" and record["engine"]["version"] == "0.0-fake"
    assert record["metric"]["class"] == "ragas.metrics.collections.Faithfulness"
    assert record["judge"] == {
        "provider": "openai",
        "model": "fake-judge",
        "base_url": f"{judge.url}/",
    }
    cells = record["cells"]
    assert (cells["rows"], cells["ok"], cells["error"]) == (6, 4, 2)
    assert cells["error_types"] == {"NaN": 1, "BadRequestError": 1}
    assert [e["id"] for e in cells["examples"]] == [
        record_id for record_id in _ids(metaeval_dir)[4:6]
    ]
    # One pair won, one lost; the third has no score on either side and is not counted.
    assert (record["n_units"], record["n_scored"]) == (3, 2)
    accuracy = next(f for f in record["figures"] if f["name"] == "pairwise_accuracy")
    assert accuracy["value"] == 0.5
    # Two requests per row (the failing row's second one was answered with a 400), counted per row.
    assert requests == 12 and record["cost"]["calls_per_item"] == 2.0
    lines = [
        json.loads(text)
        for text in (Path(record["run_dir"]) / "ragas_cells.jsonl").read_text().splitlines()
    ]
    usage = {
        line["row"]: (line["requests"], line["input_tokens"], line["output_tokens"])
        for line in lines
    }
    assert usage == {
        0: (2, 20, 6),
        1: (2, 20, 6),
        2: (2, 20, 6),
        3: (2, 20, 6),
        4: (2, 20, 6),
        5: (2, 10, 3),
    }
    assert (
        next(line for line in lines if line["row"] == 4)["message"]
        == "Ragas returned nan without raising"
    )
    assert record["cost"]["input_tokens_per_item"] == pytest.approx((5 * 20 + 10) / 6)
    assert record["cost"]["output_tokens_per_item"] == pytest.approx((5 * 6 + 3) / 6)
    assert record["cost"]["rows_computed"] == 6


def _ids(metaeval_dir):
    return load_suite(
        "wikieval",
        "faithfulness",
        data_dir=metaeval_dir,
        aspect=None,
        split="test",
        limit=3,
        seed=0,
    )[1].ids


def test_a_rerun_scores_only_the_rows_that_failed(metaeval_dir, tmp_path):
    responses = [row["response"] for row in _rows(metaeval_dir, "faithfulness", 3)]
    with ScoreJudge({responses[4]: "nan"}, fail={responses[5]}) as judge:
        first = _run(metaeval_dir, tmp_path, judge)
        assert first["cells"]["error"] == 2 and judge.count == 12
        judge.scores, judge.fail = (
            {responses[4]: "0.7", responses[5]: "0.1"},
            set(),
        )  # the judge recovers
        second = _run(metaeval_dir, tmp_path, judge)
        assert judge.count == 12 + 4  # rows 4 and 5 only
    assert second["cells"]["error"] == 0 and second["n_scored"] == 3
    assert second["cost"]["rows_computed"] == 2 and second["run_dir"] == first["run_dir"]


def test_metric_options_reach_ragas_and_keep_their_own_run(metaeval_dir, tmp_path):
    with ScoreJudge() as judge:  # every response scores 0.5
        plain = _run(metaeval_dir, tmp_path, judge)
        tuned = _run(metaeval_dir, tmp_path, judge, options={"offset": 0.25})
    assert tuned["metric"]["params"] == {"offset": 0.25} and plain["metric"]["params"] == {}
    values = {}
    for record in (plain, tuned):
        lines = (Path(record["run_dir"]) / "ragas_cells.jsonl").read_text().splitlines()
        values[bool(record["metric"]["params"])] = {json.loads(text)["value"] for text in lines}
    assert values == {False: {0.5}, True: {0.75}}  # the fake metric adds its offset option
    assert tuned["run_dir"] != plain["run_dir"]
    assert result_stem(tuned) != result_stem(plain)


def test_a_different_judge_does_not_reuse_finished_rows(metaeval_dir, tmp_path):
    with ScoreJudge() as judge:
        first = _run(metaeval_dir, tmp_path, judge)
    with ScoreJudge() as other:  # another port: another endpoint, another identity
        second = _run(metaeval_dir, tmp_path, other)
        assert other.count == 12
    assert second["run_dir"] != first["run_dir"] and second["cost"]["rows_computed"] == 6


def test_the_judges_key_reaches_the_worker_by_environment(metaeval_dir, tmp_path):
    with ScoreJudge() as judge:
        llm = llm_factory(f"openai/fake-judge@{judge.url}", api_key="sk-side-by-side", cache=False)
        run_ragas_benchmark(
            "wikieval",
            "faithfulness",
            python=make_fake_ragas(tmp_path),
            data_dir=metaeval_dir,
            llm=llm,
            limit=1,
            runs_dir=tmp_path / "runs",
            show_progress=False,
        )
    assert judge.keys == {"Bearer sk-side-by-side"}


def test_rows_without_a_field_the_ragas_metric_needs_are_refused_before_any_request(
    metaeval_dir, tmp_path
):
    with ScoreJudge() as judge:
        with pytest.raises(
            UsageError, match="ContextPrecision needs reference, which the suite's rows do not have"
        ):
            run_ragas_benchmark(
                "wikieval",
                "context_precision",
                python=make_fake_ragas(tmp_path),
                data_dir=metaeval_dir,
                aspect="faithfulness",
                llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
                limit=1,
                runs_dir=tmp_path / "runs",
                show_progress=False,
            )
        assert judge.count == 0


def test_answer_relevancy_embeds_through_assays_own_embedding_model(metaeval_dir, tmp_path):
    rows = _rows(metaeval_dir, "answer_relevancy", 2)  # pairs: (answer, poor_answer)
    vectors = {}
    for index, row in enumerate(rows):
        vectors[row["user_input"]] = [1.0, 0.0]
        vectors[row["response"]] = [1.0, 0.1] if index % 2 == 0 else [0.1, 1.0]
    embeddings = Embeddings(ScriptedProvider(model="scripted-embedder", vectors=vectors))
    with ScoreJudge() as judge:
        record = run_ragas_benchmark(
            "wikieval",
            "answer_relevancy",
            python=make_fake_ragas(tmp_path),
            data_dir=metaeval_dir,
            llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
            embeddings=embeddings,
            limit=2,
            runs_dir=tmp_path / "runs",
            show_progress=False,
        )
    assert record["cells"]["ok"] == 4, record["cells"]
    assert next(f for f in record["figures"] if f["name"] == "pairwise_accuracy")["value"] == 1.0
    assert record["embeddings"] is not None and embeddings.usage.usage.requests >= 1


def test_the_embeddings_endpoint_answers_like_openai_and_reports_failures():
    class Broken:
        model = "broken"

        def embed_texts(self, texts):
            raise RuntimeError("no vectors today")

    embeddings = Embeddings(
        ScriptedProvider(model="scripted-embedder", vectors={"a": [1.0, 2.0], "b": [3.0, 4.0]})
    )
    with embeddings_endpoint(embeddings) as url:
        reply = httpx.post(f"{url}/embeddings", json={"model": "x", "input": ["a", "b"]})
        single = httpx.post(f"{url}/embeddings", json={"model": "x", "input": "b"})
    assert url.startswith("http://127.0.0.1:")
    assert reply.status_code == 200
    assert [item["embedding"] for item in reply.json()["data"]] == [[1.0, 2.0], [3.0, 4.0]]
    assert single.json()["data"][0]["embedding"] == [3.0, 4.0]
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/embeddings", json={"input": ["a"]}, timeout=2)  # closed after the block
    with embeddings_endpoint(Broken()) as url:
        failed = httpx.post(f"{url}/embeddings", json={"input": ["a"]})
    assert (
        failed.status_code == 500
        and "RuntimeError: no vectors today" in failed.json()["error"]["message"]
    )


class SlowEmbedder(ScriptedProvider):
    async def embed(self, texts):
        await asyncio.sleep(0.05)
        return [[float(len(text)), 1.0] for text in texts], 1


def test_the_embeddings_endpoint_serves_requests_that_arrive_together():
    embeddings = Embeddings(SlowEmbedder(model="slow"))
    replies: list[httpx.Response] = []
    with embeddings_endpoint(embeddings) as url:

        def post(text: str) -> None:
            replies.append(httpx.post(f"{url}/embeddings", json={"input": [text]}, timeout=30))

        threads = [threading.Thread(target=post, args=("x" * n,)) for n in range(1, 9)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(reply.status_code for reply in replies) == [200] * 8
    assert sorted(reply.json()["data"][0]["embedding"][0] for reply in replies) == [
        float(n) for n in range(1, 9)
    ]


def test_a_worker_that_fails_is_an_error_with_its_cause(metaeval_dir, tmp_path):
    with ScoreJudge() as judge, pytest.raises(UsageError, match="has no metric 'ContextRecall'"):
        run_ragas_benchmark(
            "wikieval",
            "context_recall",
            python=make_fake_ragas(tmp_path),
            data_dir=metaeval_dir,
            aspect="context_relevance",
            llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
            limit=1,
            runs_dir=tmp_path / "runs",
            show_progress=False,
        )


def test_setup_errors_name_the_fix(monkeypatch, tmp_path):
    monkeypatch.delenv("ASSAY_RAGAS_PYTHON", raising=False)
    with pytest.raises(UsageError, match=r"ASSAY_RAGAS_PYTHON.*pip install ragas==0\.4\.3"):
        ragas_python(None)
    with pytest.raises(UsageError, match="no Python interpreter at"):
        ragas_python(tmp_path / "missing" / "python")
    monkeypatch.setenv("ASSAY_RAGAS_PYTHON", str(make_fake_ragas(tmp_path)))
    assert ragas_python(None).name == "python"
    with pytest.raises(UsageError, match="no Ragas counterpart is wired for 'bleu_score'"):
        ragas_metric_class("bleu_score")
    assert ragas_metric_class("nv_context_relevance") == "ContextRelevance"
    with pytest.raises(UsageError, match="OpenAI-compatible judge"):
        judge_endpoint(LLM(ScriptedProvider(["x"])))
    url, model, key = judge_endpoint(
        llm_factory("openai/some-model@http://127.0.0.1:9/v1", api_key="k", cache=False)
    )
    assert (url.rstrip("/"), model, key) == ("http://127.0.0.1:9/v1", "some-model", "k")


def test_the_merged_table_puts_ragas_beside_assay(metaeval_dir, tmp_path):
    results = tmp_path / "results"
    responses = [row["response"] for row in _rows(metaeval_dir, "faithfulness", 3)]
    with ScoreJudge({responses[0]: "0.9", responses[1]: "0.1"}) as judge:  # one win, two ties: 2/3
        mine = run_benchmark(
            "wikieval",
            Faithfulness(),
            data_dir=metaeval_dir,
            llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
            limit=3,
            runs_dir=tmp_path / "runs",
            show_progress=False,
        )
        theirs = _run(metaeval_dir, tmp_path, judge)
    assert mine["cells"]["ok"] == 6, mine["cells"]
    paths = [write_record(record, results)[0] for record in (mine, theirs)]
    assert paths[0] != paths[1] and "Ragas-0.0-fake-faithfulness" in paths[1].name
    merge_results(results)
    table = (results / "README.md").read_text()
    lines = [line for line in table.splitlines() if line.startswith("| wikieval |")]
    assert len(lines) == 3
    assert lines[0].startswith("| wikieval | test | faithfulness | assay | faithfulness")
    assert lines[1].startswith("| wikieval | test | faithfulness | Ragas 0.0-fake | faithfulness")
    # the prompts column: assay's own prompt with its hash, the other engine's marked as its own
    supported = next(p for p in mine["prompts"] if p["id"] == "supported")
    assert f"| supported {supported['hash'][:6]} |" in lines[0]
    assert "| Ragas 0.0-fake's own |" in lines[1]
    mine_text = next(f for f in mine["figures"] if f["name"] == "pairwise_accuracy")
    assert lines[2].startswith(
        "| wikieval | test | faithfulness | 3 | openai/fake-judge | pairwise accuracy | faithfulness(scoring=probability, statements=sentences, verdicts=list, statements_per_call=3, lexical_anchor=True)"
        f" | {mine_text['value']:.3f} ["
    )
    assert "| Ragas 0.0-fake Faithfulness | 0.667 [" in lines[2]
    assert "## Side by side with Ragas (same items, same judge)" in table
    markdown = paths[1].with_suffix(".md").read_text()
    assert "| scored by | Ragas 0.0-fake in its own virtualenv" in markdown
    assert "| prompts | Ragas 0.0-fake's own |" in markdown
    assert json.loads(paths[1].read_text())["engine"]["name"] == "ragas"


def test_runs_on_other_items_or_judges_are_not_paired():
    def record(engine: str, limit: int, model: str) -> dict:
        return {
            "suite": "wikieval",
            "aspect": "faithfulness",
            "split": "test",
            "limit": limit,
            "seed": 0,
            "engine": {"name": engine, "version": "1"},
            "judge": {"provider": "p", "model": model},
            "metric": {"name": "faithfulness", "class": "x.Faithfulness", "params": {}},
            "n_units": limit,
            "n_scored": limit,
            "cost": {"seconds_per_item": 1.0},
            "figures": [
                {
                    "name": "pairwise_accuracy",
                    "label": "pairwise accuracy",
                    "headline": True,
                    "value": 0.5,
                    "low": 0.1,
                    "high": 0.9,
                }
            ],
        }

    assert side_by_side_markdown([record("assay", 3, "a"), record("ragas", 4, "a")]) == []
    assert side_by_side_markdown([record("assay", 3, "a"), record("ragas", 3, "b")]) == []
    assert len(side_by_side_markdown([record("assay", 3, "a"), record("ragas", 3, "a")])) == 6


def test_seconds_per_item_say_when_answers_came_from_the_cache():
    from assay.benchmark.report import _seconds

    assert (
        _seconds({"seconds_per_item": 2.5, "calls_per_item": 1.0, "cached_calls_per_item": 0.0})
        == "2.50"
    )
    assert (
        _seconds({"seconds_per_item": 0.01, "calls_per_item": 0.0, "cached_calls_per_item": 1.0})
        == "0.01 (all cached)"
    )
    assert (
        _seconds({"seconds_per_item": 1.0, "calls_per_item": 1.0, "cached_calls_per_item": 2.0})
        == "1.00 (partly cached)"
    )


def _gone(pid: int) -> bool:
    """Exited (or a zombie nobody has reaped yet: it makes no more requests either)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in status


def test_the_worker_stops_when_the_process_that_started_it_is_killed(metaeval_dir, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(json.dumps(row) + "\n" for row in _rows(metaeval_dir, "faithfulness", 2))
    )
    with ScoreJudge() as judge:
        judge.delay = 60.0  # every request hangs: only the watchdog can end the worker early
        command = [
            str(make_fake_ragas(tmp_path)),
            "-I",
            str(WORKER),
            "--metric-class",
            "Faithfulness",
            "--llm-url",
            judge.url,
            "--llm-model",
            "m",
            "--rows",
            str(rows),
            "--out",
            str(tmp_path / "out.jsonl"),
        ]
        starter = (
            "import subprocess, sys, time; "
            f"child = subprocess.Popen({command!r}, stdout=subprocess.DEVNULL); "
            "print(child.pid, flush=True); time.sleep(600)"
        )
        parent = subprocess.Popen(
            [sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True
        )
        worker = int(parent.stdout.readline())
        try:
            deadline = time.monotonic() + 20
            while judge.count == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert judge.count > 0 and not _gone(worker)  # it is working, and waiting on the judge
            parent.kill()
            parent.wait()
            while not _gone(worker) and time.monotonic() < deadline + 10:
                time.sleep(0.2)
            assert _gone(worker)
        finally:  # whatever failed, leave no process behind
            parent.kill()
            parent.wait()
            if not _gone(worker):
                os.kill(worker, signal.SIGKILL)


def test_an_interpreter_without_ragas_is_named_with_the_install_line(metaeval_dir, tmp_path):
    with (
        ScoreJudge() as judge,
        pytest.raises(UsageError, match=r"cannot import Ragas .*install ragas==0\.4\.3"),
    ):
        run_ragas_benchmark(
            "wikieval",
            "faithfulness",
            python=sys.executable,
            data_dir=metaeval_dir,
            llm=llm_factory(f"openai/fake-judge@{judge.url}", cache=False),
            limit=1,
            runs_dir=tmp_path / "runs",
            show_progress=False,
        )
    assert judge.count == 0


def test_hand_written_notes_are_appended_to_the_table_of_record(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    merge_results(results)
    assert "## Notes" not in (results / "README.md").read_text()
    (results / "notes.md").write_text("- X was not measured: no model offline.\n")
    merge_results(results)
    table = (results / "README.md").read_text()
    assert table.rstrip().endswith("## Notes\n\n- X was not measured: no model offline.")


def test_the_merged_table_sorts_runs_with_and_without_a_limit(tmp_path):
    # the committed Ragas answer-relevancy runs: the first 25 pairs and all 50
    committed = Path(__file__).parents[2] / "benchmarks" / "results"
    theirs = sorted(
        committed.glob("wikieval__answer_relevance__Ragas-0.4.3-answer_relevancy__*.json")
    )
    limits = {json.loads(path.read_text()).get("limit") for path in theirs}
    assert limits == {None, 25}
    for path in theirs:
        (tmp_path / path.name).write_text(path.read_text())
    merge_results(tmp_path)
    table = (tmp_path / "README.md").read_text()
    assert "0.570 [0.422, 0.709]" in table and "0.580 [0.368, 0.773]" in table
