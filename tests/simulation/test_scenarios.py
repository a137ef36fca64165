"""Scenarios: written, read from files (every bad row named before any work), made from a test set,
and the forecast of what simulating them will cost."""

from __future__ import annotations

import json

import pytest

from assay.errors import DataError, UsageError
from assay.models.llm import LLM
from assay.models.providers.scripted import ScriptedProvider
from assay.models.usage import Price
from assay.schema.dataset import EvaluationDataset
from assay.schema.samples import SingleTurnSample
from assay.simulation import (
    Scenario,
    SimulationEstimate,
    estimate_simulation,
    load_scenarios,
    scenarios_from_testset,
    simulate,
)
from assay.testset.persona import Persona
from assay.testset.testset import Testset, TestsetSample


def test_a_scenario_is_checked_when_written():
    scenario = Scenario(persona="a nurse", goal="move an order", facts="order 5521")
    assert scenario.facts == ["order 5521"]
    assert scenario.label(0) == "#1" and Scenario(persona="p", goal="g", name="x").label(3) == "x"
    for bad in (
        {"persona": " ", "goal": "g"},
        {"persona": "p"},
        {"persona": "p", "goal": "g", "max_turns": 0},
    ):
        with pytest.raises(ValueError):
            Scenario(**bad)
    with pytest.raises(ValueError, match="Extra inputs"):
        Scenario(persona="p", goal="g", fact=["typo"])


def test_jsonl_json_and_csv_files_load(tmp_path):
    rows = [
        {"persona": "p1", "goal": "g1", "facts": ["a", "b"], "name": "one", "max_turns": 4},
        {"persona": "p2", "goal": "g2", "reference_outcome": "done"},
    ]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "s.csv").write_text(
        'persona,goal,facts,name,max_turns,reference_outcome\np1,g1,"a\nb",one,4,\np2,g2,,,,done\n',
        encoding="utf-8",
    )
    expected = [Scenario(**rows[0]), Scenario(**rows[1])]
    for name in ("s.jsonl", "s.json", "s.csv"):
        assert load_scenarios(tmp_path / name) == expected, name
    (tmp_path / "list.csv").write_text(
        'persona,goal,facts\np,g,"[""x"", ""y""]"\n', encoding="utf-8"
    )
    assert load_scenarios(tmp_path / "list.csv")[0].facts == ["x", "y"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "a.jsonl",
            '{"persona": "p", "goal": "g"}\n{"persona": "p"}\n',
            r"a.jsonl: row 2: goal: Field required",
        ),
        (
            "b.jsonl",
            '{"persona": "p", "goal": "g"}\n{"persona": "p", "goal": \n',
            r"b.jsonl: row 2: not valid JSON",
        ),
        (
            "c.jsonl",
            '{"persona": "p", "goal": "g", "goal": "h"}\n',
            r"row 1: not valid JSON .*'goal' appears twice",
        ),
        (
            "d.jsonl",
            '{"persona": "p", "goal": "g", "budget": 3}\n',
            r"row 1: budget: unknown field \(the fields are persona, goal",
        ),
        ("e.csv", "persona,goal\np,g\nq\n", r"e.csv: row 2: 1 fields where the header has 2"),
        (
            "f.csv",
            "persona,goal,max_turns\np,g,many\n",
            r"f.csv: row 1: max_turns: Input should be a valid integer",
        ),
        ("g.jsonl", '["p", "g"]\n', r"row 1: a scenario must be an object"),
        (
            "h.jsonl",
            '{"persona": "p", "goal": "g", "name": "x"}\n{"persona": "q", "goal": "g", "name": "x"}\n',
            r"row 2: the name 'x' is also the name of row 1",
        ),
        ("i.txt", "persona: p\n", r"unsupported file type '.txt'"),
        ("j.jsonl", "\n", r"no scenarios"),
    ],
)
def test_a_bad_row_is_named(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load_scenarios(path)


def test_a_list_names_the_index_and_a_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match="index 1: goal: Field required"):
        load_scenarios([{"persona": "p", "goal": "g"}, {"persona": "p"}])
    with pytest.raises(DataError, match=r"nope\.jsonl: file not found"):
        load_scenarios(tmp_path / "nope.jsonl")
    one = Scenario(persona="p", goal="g")
    assert load_scenarios(one) == [one]  # a lone scenario is a list of one
    with pytest.raises(UsageError, match="scenarios must be a file path or a list"):
        load_scenarios({"persona": "p", "goal": "g"})


def test_bad_scenarios_stop_the_run_before_any_call(tmp_path):
    provider = ScriptedProvider([], repeat_last=True)
    with pytest.raises(DataError, match="index 0: persona"):
        simulate(lambda m: "x", [{"goal": "g"}], user_llm=LLM(provider), show_progress=False)
    assert provider.requests == []


def test_scenarios_from_a_testset_ask_its_questions_as_its_personas():
    testset = Testset(
        samples=[
            TestsetSample(
                eval_sample=SingleTurnSample(
                    user_input="When was the bridge built?",
                    reference="In 1932.",
                    persona_name="Historian",
                ),
                synthesizer_name="single_hop",
            ),
            TestsetSample(
                eval_sample=SingleTurnSample(user_input="Who designed it?", persona_name="Tourist"),
                synthesizer_name="single_hop",
            ),
        ]
    )
    personas = [Persona(name="Historian", role_description="Studies old bridges.")]
    first, second = scenarios_from_testset(testset, personas=personas, max_turns=4)
    assert first == Scenario(
        persona="Historian: Studies old bridges.",
        goal="Get a correct, complete answer to this question: When was the bridge built?",
        reference_outcome="The user is told: In 1932.",
        name="testset-1",
        max_turns=4,
        metadata={"question": "When was the bridge built?"},
    )
    assert second.persona == "Tourist" and second.reference_outcome is None
    dataset = EvaluationDataset([SingleTurnSample(user_input="Q?")])
    (plain,) = scenarios_from_testset(dataset, persona="a student")
    assert plain.persona == "a student" and plain.goal.endswith("Q?")
    with pytest.raises(DataError, match="index 0: a test-set sample needs a question"):
        scenarios_from_testset([{"reference": "x"}])


def test_the_estimate_is_an_upper_bound_made_without_calls():
    provider = ScriptedProvider([], repeat_last=True)
    llm = LLM(provider, price=Price(1.0, 2.0))
    scenarios = [Scenario(persona="p", goal="g"), Scenario(persona="p", goal="h", max_turns=2)]
    found = estimate_simulation(scenarios, user_llm=llm, max_turns=3)
    assert found.requests == 2 * (3 + 2)  # a user and a judge call per turn
    assert found.output_tokens == 100 * 5
    assert found.cost == pytest.approx((found.input_tokens * 1.0 + found.output_tokens * 2.0) / 1e6)
    more = estimate_simulation(scenarios, user_llm=llm, max_turns=6)
    assert more.input_tokens > found.input_tokens  # longer conversations read more
    via_simulate = simulate(lambda m: "x", scenarios, user_llm=llm, max_turns=3, estimate=True)
    assert isinstance(via_simulate, SimulationEstimate) and via_simulate == found
    assert "at most 10 model requests for 2 conversations" in str(found)
    assert provider.requests == []
    unpriced = LLM(ScriptedProvider([]))
    assert estimate_simulation(scenarios, user_llm=unpriced).cost is None
