"""Prompt localisation: translating examples with a judge, saving and loading prompt files, and
the checks that keep a file from being used with a prompt it no longer fits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assay.errors import OutputParseError, UsageError
from assay.metrics.registry import create_metric
from assay.models import LLM, ScriptedProvider
from assay.prompts.localize import (
    MAX_FILE_BYTES,
    PromptFileError,
    PromptSchemaMismatch,
    adapt_prompts,
    apply_prompts,
    load_prompts,
    prompt_file_name,
    prompt_schema,
    save_prompts,
    scan_prompt_directory,
)
from assay.prompts.prompt import load_prompt


def translator(mark: str = "[de] ", *, drop_one: bool = False, break_numbering: bool = False):
    """A scripted judge that 'translates' by prefixing every line, as a real one would keep numbering."""

    def reply(request):
        user = str(request.messages[-1].content)
        strings = json.loads(
            re.search(r"<strings>\n(.*)\n</strings>", user, flags=re.DOTALL).group(1)
        )
        out = [
            re.sub(r"^(\d+\.\s*)?", lambda m: (m.group(1) or "") + mark, s, flags=re.MULTILINE)
            for s in strings
        ]
        if break_numbering:
            out = [s.replace("1. ", "one: ") for s in out]
        if drop_one:
            out = out[:-1]
        return json.dumps({"statements": out}, ensure_ascii=False)

    provider = ScriptedProvider([reply], repeat_last=True)
    return LLM(provider), provider


def test_adapting_translates_the_examples_and_keeps_what_the_metric_parses():
    llm, provider = translator()
    metric = create_metric("faithfulness", statements="claims")
    adapted = adapt_prompts(metric, "german", llm)
    assert set(adapted) == {"claims", "supported"}
    assert len(provider.requests) == 2  # one call per prompt
    claims, supported = adapted["claims"], adapted["supported"]
    original_claims, original_supported = load_prompt("claims"), load_prompt("supported")
    for new, old in ((claims, original_claims), (supported, original_supported)):
        assert new.language == "german"
        assert prompt_schema(new) == prompt_schema(old)
        assert new.instruction == old.instruction  # not translated unless asked
    # JSON answers: values translated, keys kept
    assert (
        claims.examples[0].output["claims"][0]
        == "[de] " + original_claims.examples[0].output["claims"][0]
    )
    assert claims.examples[1].output == {"claims": []}
    assert claims.examples[0].input["question"].startswith("[de] ")
    # verdict answers are labels the metric reads: untouched; numbered items keep their numbers
    assert supported.examples[0].output == original_supported.examples[0].output
    assert supported.examples[0].input["items"].startswith("1. [de] The Amazon")
    # adapting does not apply
    assert metric.judge_prompts()["claims"] == original_claims
    apply_prompts(metric, adapted)
    assert metric.judge_prompts()["claims"] == claims


def test_the_instruction_is_translated_when_asked():
    llm, _ = translator()
    adapted = adapt_prompts(load_prompt("claims"), "german", llm, adapt_instruction=True)
    assert adapted["claims"].instruction.startswith("[de] ")


def test_a_prompt_already_in_the_language_needs_no_call():
    llm, provider = translator()
    adapted = adapt_prompts({"claims": load_prompt("claims", "chinese")}, "chinese", llm)
    assert adapted["claims"] == load_prompt("claims", "chinese")
    assert provider.requests == []


def test_a_translation_with_a_missing_string_is_refused():
    llm, _ = translator(drop_one=True)
    with pytest.raises(OutputParseError, match="strings were sent"):
        adapt_prompts(load_prompt("claims"), "german", llm)


def test_a_translation_that_loses_the_numbering_is_refused():
    llm, _ = translator(break_numbering=True)
    with pytest.raises(OutputParseError, match="numbered lines"):
        adapt_prompts(load_prompt("supported"), "german", llm)


def test_apply_refuses_a_prompt_the_metric_does_not_use():
    metric = create_metric("faithfulness", statements="claims")
    with pytest.raises(UsageError, match="has no prompt 'entities'"):
        apply_prompts(metric, {"entities": load_prompt("entities")})


# -- files ------------------------------------------------------------------------------------------
def test_save_and_load_round_trip(tmp_path: Path):
    llm, _ = translator()
    source = create_metric("faithfulness", statements="claims")
    apply_prompts(source, adapt_prompts(source, "german", llm))
    written = save_prompts(source, tmp_path)
    assert sorted(p.name for p in written) == [
        "faithfulness_claims_german.json",
        "faithfulness_supported_german.json",
    ]
    target = create_metric("faithfulness", statements="claims")
    loaded = load_prompts(target, tmp_path, "german", apply=True)
    assert loaded == source.judge_prompts()
    assert target.judge_prompts() == source.judge_prompts()
    assert {p.hash for p in loaded.values()} == {p.hash for p in source.judge_prompts().values()}


def test_builtin_chinese_prompts_round_trip(tmp_path: Path):
    source = create_metric("answer_relevancy", language="chinese")
    save_prompts(source, tmp_path)
    assert (tmp_path / "answer_relevancy_rating_answer_completeness_chinese.json").is_file()
    assert (
        load_prompts(create_metric("answer_relevancy"), tmp_path, "chinese")
        == source.judge_prompts()
    )


def test_saving_over_an_existing_file_needs_overwrite(tmp_path: Path):
    metric = create_metric("context_recall")
    save_prompts(metric, tmp_path)
    with pytest.raises(PromptFileError, match="already exists"):
        save_prompts(metric, tmp_path)
    assert save_prompts(metric, tmp_path, overwrite=True)


def test_saving_needs_an_existing_directory(tmp_path: Path):
    with pytest.raises(PromptFileError, match="not an existing directory"):
        save_prompts(create_metric("context_recall"), tmp_path / "missing")


def test_a_missing_file_is_reported(tmp_path: Path):
    with pytest.raises(
        PromptFileError, match=r"no prompt file context_recall_supported_german\.json"
    ):
        load_prompts(create_metric("context_recall"), tmp_path, "german")


def saved(tmp_path: Path) -> Path:
    save_prompts(create_metric("context_recall", language="chinese"), tmp_path)
    return tmp_path / "context_recall_supported_chinese.json"


def edit(file: Path, change) -> None:
    data = json.loads(file.read_text(encoding="utf-8"))
    change(data)
    file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("version", 2, "version 2 (now 1)"),
        ("inputs", ["source"], "inputs"),
        ("choices", ["ja", "nein"], "choices"),
        ("answer", "json", "answer"),
    ],
)
def test_a_file_for_another_schema_is_refused(tmp_path: Path, field, value, message):
    file = saved(tmp_path)
    edit(file, lambda data: data["schema"].__setitem__(field, value))
    with pytest.raises(PromptSchemaMismatch, match=re.escape(message)) as info:
        load_prompts(create_metric("context_recall"), tmp_path, "chinese")
    assert "re-create it with adapt_prompts" in str(info.value)


def test_examples_that_do_not_fit_the_prompt_are_refused(tmp_path: Path):
    file = saved(tmp_path)
    edit(file, lambda data: data["examples"][0]["input"].pop("source"))
    with pytest.raises(PromptFileError, match=r"examples\[0\] must give exactly the inputs"):
        load_prompts(create_metric("context_recall"), tmp_path, "chinese")
    save_prompts(create_metric("faithfulness", statements="claims", language="chinese"), tmp_path)
    edit(
        tmp_path / "faithfulness_claims_chinese.json",
        lambda data: data["examples"][0].__setitem__("output", {"statements": ["x"]}),
    )
    with pytest.raises(PromptFileError, match="answers with keys"):
        load_prompts(create_metric("faithfulness", statements="claims"), tmp_path, "chinese")


def test_a_file_in_another_language_or_format_is_refused(tmp_path: Path):
    file = saved(tmp_path)
    edit(file, lambda data: data.__setitem__("language", "english"))
    with pytest.raises(PromptFileError, match="is in 'english', not 'chinese'"):
        load_prompts(create_metric("context_recall"), tmp_path, "chinese")
    edit(file, lambda data: data.__setitem__("format", "ragas"))
    with pytest.raises(PromptFileError, match="not an assay prompt file"):
        load_prompts(create_metric("context_recall"), tmp_path, "chinese")


def test_an_oversized_file_is_refused(tmp_path: Path):
    file = saved(tmp_path)
    with open(file, "ab") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(PromptFileError, match="larger than the limit of 4,194,304 bytes"):
        load_prompts(create_metric("context_recall"), tmp_path, "chinese")


def test_file_names_cannot_lead_outside_the_directory(tmp_path: Path):
    with pytest.raises(PromptFileError, match="cannot be part of a prompt file name"):
        prompt_file_name("../../etc/faithfulness", "claims", "chinese")
    with pytest.raises(PromptFileError):
        prompt_file_name("faithfulness", "claims", "../chinese")
    assert (
        prompt_file_name("", "claims", "chinese") == "claims_chinese.json"
    )  # Ragas drops an empty name
    metric = create_metric("faithfulness", name="../escape")
    with pytest.raises(PromptFileError):
        save_prompts(metric, tmp_path)


def test_a_linked_file_leading_outside_is_refused_when_loading(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    saved(outside)
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "context_recall_supported_chinese.json").symlink_to(
        outside / "context_recall_supported_chinese.json"
    )
    with pytest.raises(PromptFileError, match="leads outside"):
        load_prompts(create_metric("context_recall"), inside, "chinese")
    with pytest.raises(PromptFileError, match="link leading outside"):
        scan_prompt_directory(inside)


def test_the_directory_scan_lists_shallow_files_first(tmp_path: Path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for path in (tmp_path / "a" / "b" / "x.json", tmp_path / "x.json", tmp_path / "a" / "y.json"):
        path.write_text("{}")
    found = scan_prompt_directory(tmp_path)
    assert found.count == 3
    assert found.find("x.json") == tmp_path / "x.json"
    assert found.find("y.json") == tmp_path / "a" / "y.json"
    assert found.find("z.json") is None
