"""benchmarks/testset_generation.py pays nothing twice: answers go through the response cache
(unless --no-cache) and assay's run checkpoints to a directory outside the repository, so a
rerun resumes; the record says how many judge calls were made and how many answers were cached."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.testset.corpus import FOUNDRY, GARDEN, KETTLES

REPO = Path(__file__).resolve().parents[2]


def _load_benchmark():
    path = REPO / "benchmarks" / "testset_generation.py"
    spec = importlib.util.spec_from_file_location("benchmarks_testset_generation_resume", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_benchmark()


@pytest.fixture
def setup(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in (("kettles.md", KETTLES), ("foundry.rst", FOUNDRY), ("garden.md", GARDEN)):
        (docs / name).write_text(text, encoding="utf-8")
    base = [
        "--docs", str(docs), "--size", "2", "--seed", "3",
        "--llm", fake.server.model_string("writer"), "--embeddings", f"vllm/bow@{fake.server.url}",
        "--ragas-python", str(tmp_path / "no-venv" / "python"), "--skip-tiny",
    ]  # fmt: skip
    return fake, tmp_path, base


def _run(base: list[str], out: Path, *extra: str) -> dict:
    bench.main([*base, "--out", str(out), *extra])
    return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


def _samples(record: dict) -> list:
    return record["engines"]["assay"]["samples"]


def test_a_rerun_resumes_from_the_default_checkpoint_without_a_call(setup) -> None:
    fake, tmp_path, base = setup
    first = _run(base, tmp_path / "first")
    made = fake.chat_count
    assert first["engines"]["assay"]["figures"]["produced"] == 2
    assert first["judge_calls"] == made > 0 and first["response_cache"] is True
    checkpoint = Path(first["checkpoint"])
    assert checkpoint.is_relative_to(tmp_path / "xdg" / "assay" / "checkpoints")
    assert (checkpoint / "candidates.jsonl").exists()
    assert not Path(first["checkpoint"]).is_relative_to(REPO)

    again = _run(base, tmp_path / "again")
    assert fake.chat_count == made  # nothing asked again
    assert again["judge_calls"] == 0 and again["checkpoint"] == first["checkpoint"]
    assert again["engines"]["assay"]["details"]["resumed_samples"] == 2
    assert _samples(again) == _samples(first)
    assert "assay made 0 judge calls" in (tmp_path / "again.md").read_text(encoding="utf-8")


def test_without_a_checkpoint_the_cache_answers_and_no_cache_pays_again(setup) -> None:
    fake, tmp_path, base = setup
    first = _run(base, tmp_path / "first", "--no-checkpoint")
    assert first["checkpoint"] is None and first["judge_calls"] == fake.chat_count > 0
    made = fake.chat_count
    cached = _run(base, tmp_path / "cached", "--no-checkpoint")
    assert fake.chat_count == made
    # every answer of the first run (paid for, or already cached within it) is read back
    answers = first["judge_calls"] + first["cached_answers"]
    assert cached["judge_calls"] == 0 and cached["cached_answers"] == answers
    assert cached["engines"]["assay"]["details"]["cached_answers"] == answers
    assert _samples(cached) == _samples(first)

    uncached = _run(base, tmp_path / "uncached", "--no-checkpoint", "--no-cache")
    assert uncached["response_cache"] is False and uncached["cached_answers"] == 0
    # without the cache an answer repeated within the run is paid for again
    assert uncached["judge_calls"] == fake.chat_count - made == answers
    assert _samples(uncached) == _samples(first)
