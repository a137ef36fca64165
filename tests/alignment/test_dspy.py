"""DSPyOptimizer with the real DSPy MIPROv2 (the `dspy` extra), against a scripted judge that
reads DSPy's own prompt format: the instruction and the demos MIPROv2 picks are both kept."""

from __future__ import annotations

import re

import pytest

from assay.alignment import BinaryMetricLoss, DSPyOptimizer, InstructionConfig, MSELoss, from_rows
from assay.alignment.optimizers.dspy import read_answer
from assay.errors import BudgetExhausted, MissingDependency, UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, ScriptedProvider

# dspy is in the dev extra: these tests run against the real package, never skipped.

ROWS = [
    {
        "id": f"o{i}",
        "response": f"Claim {i} {'indeed' if i % 2 else 'maybe'}.",
        "retrieved_contexts": ["ctx"],
        "label": i % 2,
    }
    for i in range(10)
]


def dspy_judge():
    """Fills every output field DSPy asks for. As the judge, it is right only when its instruction
    says ZEBRA and it was shown at least one demo; otherwise it answers yes to everything."""

    def answer(request):
        system = str(request.messages[0].content)
        user = str(request.messages[-1].content)
        listed = re.search(r"Your output fields are:(.*?)All interactions", system, re.S)
        names = re.findall(r"`(\w+)`", listed.group(1)) if listed else ["answer"]
        parts = []
        for name in names:
            if name == "answer":
                demos = len(request.messages) > 2
                right = "ZEBRA" in system and demos
                positive = "indeed" in user.split("[[ ## items ## ]]")[-1]
                parts.append(f"[[ ## answer ## ]]\n1. {'yes' if (positive or not right) else 'no'}")
            elif name == "proposed_instruction":
                parts.append(
                    f"[[ ## {name} ## ]]\nFollow the ZEBRA rule and answer yes only for statements the source states."
                )
            else:
                parts.append(f"[[ ## {name} ## ]]\nA short note.")
        return "\n\n".join(parts) + "\n\n[[ ## completed ## ]]"

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


def test_documented_constructor_arguments():
    optimizer = DSPyOptimizer(
        metric=None,
        llm=None,
        num_candidates=10,
        max_bootstrapped_demos=5,
        max_labeled_demos=5,
        init_temperature=1.0,
        auto="light",
        num_threads=None,
        max_errors=None,
        seed=9,
        verbose=False,
        track_stats=True,
        log_dir=None,
        metric_threshold=None,
        cache=None,
    )
    assert optimizer.num_candidates == 10 and optimizer.auto == "light"
    with pytest.raises(UsageError, match="auto"):
        DSPyOptimizer(auto="extreme")
    with pytest.raises(UsageError, match="needs a metric"):
        DSPyOptimizer().optimize(from_rows(ROWS), BinaryMetricLoss())


def test_read_answer():
    assert read_answer("1. yes", "binary") == 1.0 and read_answer("no", "binary") == 0.0
    assert read_answer("score: 4", "ordinal") == 4.0
    assert read_answer("nothing", "binary") is None


@pytest.mark.parametrize("loss", [BinaryMetricLoss(), MSELoss()])
def test_mipro_keeps_the_instruction_and_the_demos_it_chose(loss):
    llm, provider = dspy_judge()
    metric = Faithfulness(llm=llm)
    optimizer = DSPyOptimizer(
        auto=None,
        num_candidates=2,
        num_trials=8,
        max_bootstrapped_demos=0,
        max_labeled_demos=2,
        num_threads=1,
        max_calls=2000,
        seed=3,
    )
    found = metric.optimize_prompts(
        from_rows(ROWS), InstructionConfig(optimizer=optimizer, loss=loss)
    )
    assert "ZEBRA" in found["supported"]
    state = metric.alignment
    assert state.selection == "fixed" and 1 <= len(state.examples) <= 2
    assert all(
        set(e.input) == {"source", "items"} and e.output.startswith("1. ") for e in state.examples
    )
    assert optimizer.last_run["calls"] == len(provider.requests) <= 2000
    # the aligned metric sends the chosen instruction and the demos, in assay's own prompt format
    provider.requests.clear()
    metric.score(response="Claim 99 maybe.", retrieved_contexts=["ctx"])
    request = provider.requests[0]
    assert "ZEBRA" in request.messages[0].content
    assert len(request.messages) == 1 + 2 * (1 + len(state.examples)) + 1


def test_the_call_budget_stops_dspy(monkeypatch):
    from assay.alignment.optimizers import dspy as module

    shown: list[int] = []
    update = module.Progress.update

    def record(self, task, **fields):
        shown.append(fields.get("completed"))
        return update(self, task, **fields)

    monkeypatch.setattr(module.Progress, "update", record)
    llm, provider = dspy_judge()
    optimizer = DSPyOptimizer(
        auto=None,
        num_candidates=2,
        num_trials=4,
        max_labeled_demos=1,
        max_bootstrapped_demos=0,
        num_threads=1,
        max_calls=5,
    )
    with pytest.raises(BudgetExhausted, match="budget of 5 model calls"):
        Faithfulness(llm=llm).optimize_prompts(
            from_rows(ROWS), InstructionConfig(optimizer=optimizer)
        )
    assert len(provider.requests) == 5
    assert shown == [1, 2, 3, 4, 5]  # the progress bar counts every call DSPy made


def test_missing_dspy_is_an_install_hint(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dspy", None)
    with pytest.raises(MissingDependency, match=r"pip install 'assay\[dspy\]'"):
        DSPyOptimizer(metric=Faithfulness()).optimize(from_rows(ROWS), BinaryMetricLoss())
