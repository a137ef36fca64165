"""Settings that used to fail late, or be taken as something else, are refused before any work
with one line naming the field and what is allowed (issue #45, 8)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assay import EvaluationDataset, evaluate
from assay.errors import DataError, UsageError
from assay.metrics import AspectCritic, ExactMatch
from assay.models import LLM, llm_factory
from assay.models.providers.scripted import ScriptedProvider

ROWS = [{"response": "a", "reference": "a"}]


def test_column_map_given_as_a_list_names_the_parameter():
    with pytest.raises(UsageError, match=r"column_map must be a mapping .* got a list"):
        evaluate(ROWS, [ExactMatch()], column_map=["response"], show_progress=False)


@pytest.mark.parametrize("flag", ["raise_exceptions", "strict"])
@pytest.mark.parametrize("value", ["yes", "false", 1, None])
def test_yes_no_settings_must_be_booleans(flag, value):
    with pytest.raises(UsageError, match=f"{flag} must be True or False, got {value!r}"):
        evaluate(ROWS, [ExactMatch()], show_progress=False, **{flag: value})


@pytest.mark.parametrize("url", ["not a url", "localhost:8000", "ftp://host/v1", "http://h:port/"])
def test_a_base_url_no_request_could_reach_is_refused_when_the_model_is_made(url):
    with pytest.raises(UsageError, match="base_url must be an http"):
        llm_factory("vllm/judge", base_url=url, cache=False)
    with pytest.raises(UsageError, match="base_url must be an http"):
        llm_factory(f"vllm/judge@{url}" if "://" in url else "vllm/judge", base_url=url)


def test_a_lone_surrogate_sent_to_a_judge_is_refused_before_any_work(tmp_path):
    path = tmp_path / "rows.jsonl"
    lines = [
        json.dumps({"response": "fine", "reference": "fine"}),
        '{"response": "bad \\ud800 text", "reference": "x"}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = EvaluationDataset.load(path)  # a dataset may hold it (classic metrics compare it)
    assert evaluate(dataset, [ExactMatch()], show_progress=False).summary("exact_match").n_ok == 2
    judge = LLM(ScriptedProvider(["yes"], repeat_last=True))
    critic = AspectCritic(name="kind", definition="Is it kind?", llm=judge)
    with pytest.raises(DataError, match=r"index 1: response holds a lone surrogate .* character 5"):
        evaluate(dataset, [critic], show_progress=False)
    assert judge.provider.requests == []  # refused before any call


def test_workers_without_ray_is_refused_by_the_cli(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "evaluate",
            str(path),
            "--metrics",
            "exact_match",
            "--workers",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "--workers goes with --ray" in said, said
    assert "Traceback" not in said
