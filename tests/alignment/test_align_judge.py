"""`assay.alignment.align_judge`: what `assay align` does, called from Python.

The outcomes test_cli_align.py asserts through the command line, reached without a subprocess and
against the same loopback fake OpenAI server: the aligned file with its held-out report, the
number of judge calls, the errors, and embeddings built only when examples are chosen by similarity.
"""

from __future__ import annotations

import json

import pytest

from assay import Faithfulness
from assay.alignment import AlignOptions, align_judge, load_aligned_metric
from assay.engine import ModelChoice
from assay.errors import DataError, UsageError
from tests.alignment.test_cli_align import rows, write
from tests.models.fake_openai import FakeOpenAI, dynamic, ok

RELABEL = {"kept": 1, "dropped": 0}


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    fake = FakeOpenAI().start()
    # The judge says yes to "9 am" rows and no to the others, for the verdict prompt it is sent.
    fake.default = dynamic(
        lambda request: ok(
            "1. yes"
            if "opens at 9 am, item" in json.dumps(request.body["messages"][-1])
            else "1. no"
        )
    )
    yield fake
    fake.stop()


def test_aligns_writes_the_state_with_its_report(tmp_path, server):
    train = write(tmp_path / "train.jsonl", rows("a", 12))
    test = write(tmp_path / "test.jsonl", rows("b", 6))
    options = AlignOptions(
        output=tmp_path / "aligned.json",
        group_column="doc",
        mapping=RELABEL,
        models=ModelChoice(
            llm="openai/test-model",
            embeddings="openai/test-embeddings",
            base_url=server.url,
            cache=False,
        ),
        examples=2,
        resamples=100,
        show_progress=False,
    )
    run = align_judge("faithfulness", train, test, options)
    assert run.output == tmp_path / "aligned.json"
    report = run.report.to_dict()
    assert report["rows"] == 6 and report["statistics"]["agreement"]["value"] == 1.0
    assert report["before"] is not None and report["differences"] is not None
    assert len(server.chat_requests) == 24  # train 12 calibration calls + test 6 before + 6 after
    saved = json.loads(run.output.read_text())
    assert saved["metric"]["class"] == "Faithfulness"
    assert len(saved["alignment"]["examples"]) == 12
    assert saved["report"]["statistics"] == report["statistics"]
    assert load_aligned_metric(run.output).alignment.threshold == run.metric.alignment.threshold
    assert isinstance(run.notes, list)


def test_rows_in_memory_with_no_examples_need_no_embeddings_and_no_file(tmp_path, server):
    judge = ModelChoice(llm="openai/test-model", base_url=server.url, cache=False)
    run = align_judge(
        Faithfulness(),
        rows("a", 12),
        rows("b", 6),
        AlignOptions(mapping=RELABEL, models=judge, examples=0, resamples=50, show_progress=False),
    )
    assert run.output is None and list(tmp_path.iterdir()) == []
    assert run.metric.alignment.k == 0 and run.report.to_dict()["rows"] == 6
    assert server.embedding_requests == []  # examples=0: nothing is chosen by similarity


def test_errors_are_clear_and_leave_no_file(tmp_path):
    bad = tmp_path / "train.jsonl"
    bad.write_text(json.dumps({"response": "x", "retrieved_contexts": ["y"]}) + "\n")
    out = tmp_path / "o.json"
    with pytest.raises(DataError, match="row 1: no label"):
        align_judge("faithfulness", bad, options=AlignOptions(output=out))
    with pytest.raises(UsageError, match="not an LLM judge"):
        align_judge("rouge_score", bad, options=AlignOptions(output=out))
    assert not out.exists()
    for examples in (-1, "sometimes", [3, -2]):
        with pytest.raises(UsageError, match="max_similar_examples"):
            AlignOptions(examples=examples)
