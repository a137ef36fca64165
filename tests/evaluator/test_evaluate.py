"""`assay.evaluator.evaluate` end to end on a scripted judge: keys, per-sample scores, languages,
prompt files instead of translation, and None (with the reason logged) when a cell has no score."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

import assay.prompts.prompt
from assay.evaluator import evaluate
from assay.metrics.registry import create_metric
from assay.prompts.localize import save_prompts
from assay.prompts.prompt import load_prompt
from tests.evaluator.judge import (
    embedder,
    reading_judge,
    silent_judge,
    system_prompts,
    translation_requests,
)

ENGLISH = {
    "user_input": ["When did Apollo 11 land?", "Who wrote Hamlet?"],
    "response": [
        "Apollo 11 landed in 1969. It carried four astronauts.",
        "Shakespeare wrote Hamlet.",
    ],
    "retrieved_contexts": [["Apollo 11 landed in 1969."], ["Shakespeare wrote Hamlet."]],
    "reference": [
        "Apollo 11 landed in 1969. Its crew was three astronauts.",
        "Shakespeare wrote Hamlet.",
    ],
}
CHINESE = {
    "user_input": ["长城有多长？"],
    "response": ["长城全长两万多公里。长城始建于春秋战国时期。"],
    "retrieved_contexts": [["长城全长两万多公里。", "长城是世界文化遗产。"]],
    "reference": ["长城全长两万多公里。它被列为世界文化遗产。"],
}


def vectors(data: dict) -> dict[str, list[float]]:
    table = {}
    for response, reference in zip(data["response"], data["reference"], strict=True):
        table[response] = [1.0, 0.0]
        table[reference] = [1.0, 0.0] if response == reference else [0.6, 0.8]
    return table


def test_scores_per_sample_with_answer_similarity_reported_as_semantic_similarity(capsys):
    llm, provider = reading_judge()
    embeddings, _ = embedder(vectors(ENGLISH))
    scores = evaluate(
        ["faithfulness", "context_recall", "answer_similarity", "exact_match"],
        ENGLISH,
        llm=llm,
        embeddings=embeddings,
    )
    assert scores == {
        "faithfulness": [0.5, 1.0],  # "It carried four astronauts." is not in the context
        "context_recall": [0.5, 1.0],  # "Its crew was three astronauts." is not either
        "semantic_similarity": [pytest.approx(0.6), 1.0],
        "exact_match": [0.0, 1.0],
    }
    assert "answer_similarity" not in scores
    # faithfulness: one verdict call per row on the response's sentences (no claim split); context
    # recall: one verdict call per row. On row 1 both metrics may send the identical verdict request
    # (the same one sentence against the same context), which the LLM layer answers once.
    assert 3 <= len(provider.requests) <= 4
    assert all(request.output is None for request in provider.requests)  # no structured claim split
    assert all(isinstance(value, float) for values in scores.values() for value in values)


def test_language_none_and_english_use_the_english_prompts():
    for language in (None, "english"):
        llm, provider = reading_judge()
        assert evaluate(["faithfulness"], ENGLISH, language, llm=llm) == {
            "faithfulness": [0.5, 1.0]
        }
        systems = system_prompts(provider)
        assert any(load_prompt("supported").instruction.strip() in s for s in systems)
        assert not any(
            load_prompt("supported", "chinese").instruction.strip() in s for s in systems
        )
        assert translation_requests(provider) == []


def test_chinese_sends_the_chinese_prompts_and_scores_chinese_text():
    llm, provider = reading_judge()
    embeddings, _ = embedder(vectors(CHINESE))
    scores = evaluate(
        ["faithfulness", "context_recall", "answer_similarity"],
        CHINESE,
        "chinese",
        llm=llm,
        embeddings=embeddings,
    )
    assert scores == {
        "faithfulness": [0.5],
        "context_recall": [0.5],
        "semantic_similarity": [pytest.approx(0.6)],
    }
    systems = system_prompts(provider)
    claims, supported = load_prompt("claims", "chinese"), load_prompt("supported", "chinese")
    assert claims.language == supported.language == "chinese"
    # faithfulness checks the response's sentences: no claim split, one verdict call (and one for recall)
    assert not any(claims.instruction.strip() in s for s in systems)
    assert sum(supported.instruction.strip() in s for s in systems) == 2
    assert not any(load_prompt("supported").instruction.strip() in s for s in systems)
    # the Chinese few-shot example travels as an earlier turn
    assert any("珠穆朗玛峰" in str(m.content) for r in provider.requests for m in r.messages)
    assert translation_requests(provider) == []
    # the reference was split into its two Chinese sentences for context recall
    recall = [
        r for r in provider.requests if "它被列为世界文化遗产。" in str(r.messages[-1].content)
    ]
    assert len(recall) == 1 and "1. 长城全长两万多公里。\n2. 它被列为世界文化遗产。" in str(
        recall[0].messages[-1].content
    )
    # and the response into its two Chinese sentences for faithfulness
    faithful = [
        r for r in provider.requests if "长城始建于春秋战国时期。" in str(r.messages[-1].content)
    ]
    assert len(faithful) == 1 and "1. 长城全长两万多公里。\n2. 长城始建于春秋战国时期。" in str(
        faithful[0].messages[-1].content
    )


def test_the_other_aliases_report_under_the_requested_name():
    llm, _ = reading_judge()
    data = {
        "user_input": ["Who wrote Hamlet?"],
        "reference": ["Shakespeare wrote Hamlet."],
        "retrieved_contexts": [["Shakespeare wrote Hamlet."]],
    }
    scores = evaluate(["llm_context_precision_with_reference", "context_precision"], data, llm=llm)
    assert scores is not None and set(scores) == {
        "llm_context_precision_with_reference",
        "context_precision",
    }


def test_an_empty_dataset_gives_empty_lists_without_a_model():
    llm, provider = silent_judge()
    assert evaluate(["exact_match"], {"response": [], "reference": []}, llm=llm) == {
        "exact_match": []
    }
    assert provider.requests == []


def test_a_skipped_cell_makes_the_call_return_none_and_says_which(capsys):
    llm, _ = reading_judge()
    data = {**ENGLISH, "retrieved_contexts": [["Apollo 11 landed in 1969."], []]}
    assert evaluate(["faithfulness"], data, llm=llm) is None
    log = capsys.readouterr().err
    assert "dataset row 1, metric faithfulness: skipped: row has no retrieved_contexts" in log
    assert "returning None: 1 of 2 cells have no score" in log


def test_a_failing_cell_makes_the_call_return_none_and_says_why(capsys):
    def garbled(request):
        return "I cannot decide." if request.output is None else json.dumps({"claims": ["a claim"]})

    from assay.models import LLM, ScriptedProvider

    llm = LLM(ScriptedProvider([garbled], repeat_last=True))
    assert evaluate(["faithfulness"], ENGLISH, llm=llm) is None
    log = capsys.readouterr().err
    assert "dataset row 0, metric faithfulness: OutputParseError" in log
    assert "dataset row 1, metric faithfulness: OutputParseError" in log


def test_an_unexpected_exception_returns_none_with_its_type(capsys):
    from assay.models import LLM, ScriptedProvider

    llm = LLM(ScriptedProvider([RuntimeError("boom")], repeat_last=True))
    assert evaluate(["faithfulness"], ENGLISH, llm=llm) is None
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_works_inside_a_running_event_loop():
    async def main():
        llm, _ = reading_judge()
        return evaluate(["faithfulness"], ENGLISH, llm=llm, show_progress=True)

    assert asyncio.run(main()) == {"faithfulness": [0.5, 1.0]}


# -- prompt files instead of translation ------------------------------------------------------------
@pytest.fixture
def english_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Built-in prompts as if no Chinese version existed: the evaluator has to translate."""
    data = tmp_path / "builtin"
    data.mkdir()
    for file in assay.prompts.prompt.DATA_DIR.glob("*.english.yaml"):
        shutil.copy(file, data / file.name)
    monkeypatch.setattr(assay.prompts.prompt, "DATA_DIR", data)
    return data


def custom_files(directory: Path, metric_name: str = "faithfulness") -> dict[str, str]:
    """Chinese prompt files for faithfulness with recognisable instructions."""
    metric = create_metric(metric_name)
    instructions = {}
    for prompt_id in metric.prompt_ids:
        english = load_prompt(prompt_id, "english")
        instructions[prompt_id] = f"自定义指令（{prompt_id}）：请按要求作答。"
        metric.set_prompt(
            english.model_copy(
                update={"language": "chinese", "instruction": instructions[prompt_id]}
            )
        )
    directory.mkdir(parents=True, exist_ok=True)
    save_prompts(metric, directory)
    return instructions


def test_without_a_prompt_file_the_examples_are_translated_first(english_only, capsys):
    llm, provider = reading_judge()
    assert evaluate(["faithfulness"], CHINESE, "chinese", llm=llm) == {"faithfulness": [0.5]}
    translations = translation_requests(provider)
    # only the prompt the default (sentence) statements send: the claims prompt is never adapted
    assert len(translations) == 1
    assert provider.requests[:1] == translations  # before any scoring call
    scoring = [str(m.content) for r in provider.requests[1:] for m in r.messages]
    assert any("译:" in text for text in scoring)  # translated examples are used
    assert any(
        load_prompt("supported").instruction.strip() in text for text in scoring
    )  # instruction kept
    assert "translating prompt 'supported' into chinese" in capsys.readouterr().err


def test_a_prompt_shared_by_two_metrics_is_translated_once(english_only):
    llm, provider = reading_judge()
    assert evaluate(["faithfulness", "context_recall"], CHINESE, "chinese", llm=llm) is not None
    assert len(translation_requests(provider)) == 1  # the supported prompt once, used by both


def test_prompt_files_are_used_instead_of_translating(english_only, tmp_path, capsys):
    instructions = custom_files(
        tmp_path / "prompts" / "zh"
    )  # one level down: the search is recursive
    llm, provider = reading_judge()
    scores = evaluate(["faithfulness"], CHINESE, "chinese", str(tmp_path / "prompts"), llm=llm)
    assert scores == {"faithfulness": [0.5]}
    assert translation_requests(provider) == []
    log = capsys.readouterr().err
    assert "faithfulness: prompt 'supported' read from" in log
    assert "prompt 'claims'" not in log  # the default sends no claim split, so its file is not read
    # sentence statements (the default): the one scoring call is the verdict call
    systems = system_prompts(provider)
    assert len(systems) == 1
    assert instructions["supported"] in systems[0]


def test_a_prompt_file_wins_over_the_builtin_chinese_prompt(tmp_path):
    instructions = custom_files(tmp_path)
    llm, provider = reading_judge()
    assert evaluate(["faithfulness"], CHINESE, "chinese", str(tmp_path), llm=llm) == {
        "faithfulness": [0.5]
    }
    systems = system_prompts(provider)
    assert any(instructions["supported"] in s for s in systems)
    assert not any(load_prompt("supported", "chinese").instruction.strip() in s for s in systems)


def test_with_language_none_prompts_path_is_checked_but_not_used(tmp_path, capsys):
    instructions = custom_files(tmp_path)
    llm, provider = reading_judge()
    assert evaluate(["faithfulness"], ENGLISH, None, str(tmp_path), llm=llm) is not None
    systems = system_prompts(provider)
    # the claims prompt is not sent with the default sentence statements: check the verdict prompt
    assert not any(instructions["supported"] in s for s in systems)
    assert any(load_prompt("supported").instruction.strip() in s for s in systems)
    assert "prompts_path is not searched" in capsys.readouterr().err


def test_a_prompt_file_for_another_schema_version_is_refused_before_any_call(tmp_path, capsys):
    custom_files(tmp_path)
    file = tmp_path / "faithfulness_supported_chinese.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    data["schema"]["version"] = 99
    file.write_text(json.dumps(data), encoding="utf-8")
    llm, provider = silent_judge()
    assert evaluate(["faithfulness"], CHINESE, "chinese", str(tmp_path), llm=llm) is None
    log = capsys.readouterr().err
    assert "prompts_path:" in log and "written for another version" in log and "version 99" in log
    assert provider.requests == []


def test_a_broken_prompt_file_is_refused_before_any_call(tmp_path, capsys):
    (tmp_path / "faithfulness_supported_chinese.json").write_text("{not json", encoding="utf-8")
    llm, provider = silent_judge()
    assert evaluate(["faithfulness"], CHINESE, "chinese", str(tmp_path), llm=llm) is None
    assert "not a JSON prompt file" in capsys.readouterr().err
    assert provider.requests == []
