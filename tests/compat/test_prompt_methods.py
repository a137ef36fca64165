"""Ragas' prompt methods on assay's judged metrics, keyed by the names Ragas gives the prompts."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import UsageError
from assay.metrics import AspectCritic, FactualCorrectness, Faithfulness
from assay.metrics.collections.faithfulness.util import NLIStatementPrompt
from tests.prompts.test_ragas_prompts_surface import translating_judge


def critic() -> AspectCritic:
    return AspectCritic(
        name="helpfulness",
        definition="Evaluate how helpful the assistant's response is to the user's query.",
    )


def test_get_prompts_uses_ragas_names_and_hands_out_one_object():
    metric = critic()
    prompts = metric.get_prompts()
    assert list(prompts) == ["single_turn_aspect_critic_prompt"]
    assert (
        prompts["single_turn_aspect_critic_prompt"]
        is metric.get_prompts()["single_turn_aspect_critic_prompt"]
    )
    assert list(Faithfulness(statements="claims").get_prompts()) == [
        "statement_generator_prompt",
        "n_l_i_statement_prompt",
    ]
    assert "claim_decomposition_prompt" in FactualCorrectness(statements="claims").get_prompts()
    # assay's own spelling is unchanged: prompts by id
    assert list(metric.judge_prompts()) == ["aspect_critic"]


def test_a_prompt_edited_in_place_is_what_the_metric_sends():
    metric = critic()
    before = metric.spec()["prompts"][0]["hash"]
    prompt = metric.get_prompts()["single_turn_aspect_critic_prompt"]
    assert metric.judge_prompt("aspect_critic").instruction == prompt.instruction  # read only
    assert metric.spec()["prompts"][0]["hash"] == before
    prompt.instruction = "Answer yes only when the response is complete. " + prompt.instruction
    metric.set_prompts(**{"single_turn_aspect_critic_prompt": prompt})
    sent = metric.judge_prompt("aspect_critic")
    assert sent.instruction.startswith("Answer yes only when the response is complete.")
    assert metric.spec()["prompts"][0]["hash"] != before
    assert (
        critic().judge_prompt("aspect_critic").instruction != sent.instruction
    )  # others untouched


def test_set_prompts_refuses_an_unknown_name_or_object():
    metric = critic()
    with pytest.raises(
        UsageError, match="has no prompt 'nope'; its prompts are single_turn_aspect"
    ):
        metric.set_prompts(nope=metric.get_prompts()["single_turn_aspect_critic_prompt"])
    with pytest.raises(UsageError, match="must be a PydanticPrompt"):
        metric.set_prompts(single_turn_aspect_critic_prompt="just text")


def test_a_typed_prompt_replaces_the_nli_prompt():
    class Strict(NLIStatementPrompt):
        instruction = "Judge each statement strictly."

    metric = Faithfulness()
    metric.set_prompts(n_l_i_statement_prompt=Strict())
    assert metric.judge_prompt("supported").instruction.startswith("Judge each statement strictly.")


def test_adapt_save_and_load_prompts(tmp_path):
    llm, _ = translating_judge()
    metric = critic()
    adapted = asyncio.run(metric.adapt_prompts("spanish", llm))
    spanish = adapted["single_turn_aspect_critic_prompt"]
    assert spanish.language == "spanish"
    assert metric.judge_prompt("aspect_critic").language == "english"  # returned, not applied
    assert spanish.examples and all(
        "ES " in str(vars(given)) for given, _ in spanish.examples
    )  # the examples were translated
    metric.set_prompts(**adapted)
    assert metric.judge_prompt("aspect_critic").language == "spanish"

    metric.save_prompts(tmp_path)
    loaded = critic().load_prompts(tmp_path, language="spanish")
    assert list(loaded) == ["single_turn_aspect_critic_prompt"]
    assert loaded["single_turn_aspect_critic_prompt"].assay_prompt() == metric.judge_prompt(
        "aspect_critic"
    )
    with pytest.raises(UsageError, match="not an existing directory"):
        metric.save_prompts(tmp_path / "missing")


def test_adapt_on_a_metric_prompt_object():
    llm, _ = translating_judge()
    prompt = critic().get_prompts()["single_turn_aspect_critic_prompt"]
    spanish = asyncio.run(prompt.adapt("spanish", llm, adapt_instruction=True))
    assert spanish.language == "spanish" and spanish.instruction.startswith("ES ")
    assert prompt.language == "english"
    assert "{user_input}" not in spanish.to_string({"user_input": "Hola", "response": "Sí"})


def test_a_synthesizer_prompt_edited_the_ragas_way_is_sent():
    from assay.testset.synthesizers import SingleHopSpecificQuerySynthesizer

    query = SingleHopSpecificQuerySynthesizer()
    prompt = query.get_prompts()["generate_query_reference_prompt"]
    prompt.instruction = "Write a yes/no question. " + prompt.instruction
    query.set_prompts(**{"generate_query_reference_prompt": prompt})
    sent = query.judge_prompt(query.prompt_id)
    assert sent.instruction.startswith("Write a yes/no question.")
    assert (
        not SingleHopSpecificQuerySynthesizer()
        .judge_prompt(query.prompt_id)
        .instruction.startswith("Write a yes/no question.")
    )


def test_what_llm_factory_returns_has_ragas_get_temperature():
    from assay.llms import llm_factory

    llm = llm_factory("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    assert llm.get_temperature(1) == 0.01
    assert llm.get_temperature(3) == 0.3


def test_save_and_load_prompts_as_one_json_file(tmp_path):
    metric = critic()
    prompt = metric.get_prompts()["single_turn_aspect_critic_prompt"]
    prompt.instruction = "Judge helpfulness only. " + prompt.instruction
    metric.set_prompts(single_turn_aspect_critic_prompt=prompt)
    metric.save_prompts(tmp_path / "helpfulness.json")

    production = critic()
    loaded = production.load_prompts(tmp_path / "helpfulness.json")  # applied, as Ragas 0.4 does
    assert list(loaded) == ["single_turn_aspect_critic_prompt"]
    assert production.judge_prompt("aspect_critic") == metric.judge_prompt("aspect_critic")
    with pytest.raises(UsageError, match="does not exist"):
        metric.save_prompts(tmp_path / "missing" / "x.json")
    (tmp_path / "broken.json").write_text("{}")
    with pytest.raises(UsageError, match="not a prompts file"):
        production.load_prompts(tmp_path / "broken.json")
    with pytest.raises(UsageError, match="has no prompt"):
        Faithfulness().load_prompts(tmp_path / "helpfulness.json")


def test_prompt_object_examples_read_by_attribute_and_edited():
    from assay.compat.ragas.prompt_view import Fields

    metric = critic()
    prompt = metric.get_prompts()["single_turn_aspect_critic_prompt"]
    given, _answer = prompt.examples[0]
    assert isinstance(given, Fields) and isinstance(given.response, str)
    prompt.examples = [*prompt.examples, (Fields(**vars(given)), "no")]
    metric.set_prompts(single_turn_aspect_critic_prompt=prompt)
    sent = metric.judge_prompt("aspect_critic")
    assert len(sent.examples) == len(critic().judge_prompt("aspect_critic").examples) + 1
    assert sent.examples[-1].output == "no"
    prompt.examples = ["not a pair"]
    with pytest.raises(UsageError, match=r"examples\[0\] must be an \(input, output\) pair"):
        metric.judge_prompt("aspect_critic")
