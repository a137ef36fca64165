"""The runnable examples of docs/integrations/{langchain,llama-index,haystack}.md run as written,
judged through ASSAY_LLM by the fake OpenAI server on 127.0.0.1 (it says "yes" to every
statement). Blocks fenced as ```python run, in order, in one namespace, with assertions on what
they return; the ```py block (a judge wrapping a hosted model) runs in tests/docs."""

from __future__ import annotations

import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before any Haystack import

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.schema.outcome import Error
from tests.models.fake_openai import FakeOpenAI, ok, serve

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    for server in serve():
        server.default = ok("1. yes")
        monkeypatch.setenv("ASSAY_LLM", server.model_string("judge"))
        monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path))  # a fresh response cache
        yield server


def run_doc(name: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    path = DOCS / name
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, f"{name} has no runnable example"
    namespace: dict[str, Any] = {"__name__": f"doc_{path.stem.replace('-', '_')}"}
    exec(compile("\n".join(blocks), str(path), "exec"), namespace)
    return namespace, capsys.readouterr().out


def test_langchain_doc(judge: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    namespace, printed = run_doc("langchain.md", capsys)
    result = namespace["result"]
    assert result["faithfulness"] == [1.0, 1.0, None]
    failed = result.outcome(2, "faithfulness")
    assert isinstance(failed, Error) and "ConnectionError" in failed.message
    assert result.dataset[1].retrieved_contexts == ["The Colosseum is in Rome."]
    assert namespace["score"] == {"faithfulness": 1.0}
    assert "[1.0, 1.0, None]" in printed and "{'faithfulness': 1.0}" in printed
    # two answered rows; the EvaluatorChain example asks what row 1 asked: a cached answer
    assert len(judge.requests) == 2


def test_llama_index_doc(judge: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    namespace, printed = run_doc("llama-index.md", capsys)
    result = namespace["result"]
    assert result["faithfulness"] == [1.0, 1.0]
    assert result.dataset[0].retrieved_contexts == [
        "The Amazon is the largest rainforest on Earth."
    ]
    assert result.dataset[0].response == "The Amazon is the largest rainforest on Earth."
    assert namespace["scored"]["tool_call_accuracy"] == [1.0]
    assert "[1.0, 1.0]" in printed and "[1.0]" in printed


def test_haystack_doc(judge: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    namespace, printed = run_doc("haystack.md", capsys)
    result = namespace["result"]
    assert result["faithfulness"] == [1.0, 1.0]
    assert result.dataset[1].retrieved_contexts == ["Mercury is the closest planet to the Sun."]
    assert namespace["out"]["evaluator"]["result"] == {"faithfulness": 1.0}
    assert "{'faithfulness': 1.0}" in printed
    assert len(judge.requests) == 2  # the in-pipeline example repeats row 0: a cached answer
