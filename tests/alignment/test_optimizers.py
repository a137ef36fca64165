"""Losses and optimizers: the right candidate under each loss, the documented arguments, the call
budget, and never a test row in any request."""

from __future__ import annotations

import json

import pytest

from assay.alignment import (
    BinaryMetricLoss,
    DemonstrationConfig,
    GeneticOptimizer,
    HuberLoss,
    InstructionConfig,
    MSELoss,
    from_rows,
)
from assay.alignment.optimizers.base import Fitness
from assay.alignment.optimizers.genetic import crossover_partners
from assay.errors import UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, ScriptedProvider
from tests.alignment.scripted import keyword_embedder, last_items, verdict


def test_losses_values_and_direction():
    assert MSELoss()([0.5, 1.0], [0.0, 1.0]) == pytest.approx(0.125)
    assert MSELoss(reduction="sum")([0.5, 1.0], [0.0, 1.0]) == pytest.approx(0.25)
    # Huber, delta 1: 0.5 * 0.5^2 for the small error; 1 * (3 - 0.5) for the large one
    assert HuberLoss(delta=1.0)([0.5, 3.0], [0.0, 0.0]) == pytest.approx((0.125 + 2.5) / 2)
    assert BinaryMetricLoss()([0.9, 0.2, 0.7], [1, 0, 0]) == pytest.approx(2 / 3)
    assert BinaryMetricLoss(metric="f1")([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.5)
    assert not MSELoss.higher_is_better and not HuberLoss.higher_is_better
    assert BinaryMetricLoss.higher_is_better
    assert MSELoss().best_index([0.3, 0.1, 0.2]) == 1
    assert BinaryMetricLoss().best_index([0.3, 0.9, 0.2]) == 1
    with pytest.raises(UsageError, match="delta"):
        HuberLoss(delta=0)
    with pytest.raises(UsageError, match="2 predictions for 1"):
        MSELoss()([1, 2], [1])


def test_crossover_partner_is_the_most_different_candidate():
    population = [
        Fitness("a", 0.5, [True, True, False, False], []),
        Fitness("b", 0.5, [True, True, False, True], []),
        Fitness("c", 0.5, [False, False, True, True], []),
    ]
    assert crossover_partners(population) == [(0, 2), (1, 2), (2, 0)]


def test_documented_constructor_arguments():
    optimizer = GeneticOptimizer(max_steps=50, population_size=10, mutation_rate=0.2)
    assert (optimizer.max_steps, optimizer.population_size, optimizer.mutation_rate) == (
        50,
        10,
        0.2,
    )
    GeneticOptimizer(
        metric=None,
        llm=None,
        max_steps=3,
        population_size=2,
        mutation_rate=0.0,
        num_demonstrations=2,
        sample_size=4,
        patience=1,
        max_calls=10,
        seed=1,
        show_progress=False,
    )
    with pytest.raises(UsageError, match="population_size"):
        GeneticOptimizer(population_size=0)
    with pytest.raises(UsageError, match="mutation_rate"):
        GeneticOptimizer(mutation_rate=1.5)
    assert InstructionConfig(llm=None, optimizer=optimizer, loss=MSELoss()).optimizer is optimizer
    assert DemonstrationConfig(embedding=None, top_k=3, threshold=0.7).top_k == 3


ROWS = [
    {
        "id": f"o{i}",
        "response": f"Claim {i} {'indeed' if i % 2 else 'maybe'}.",
        "retrieved_contexts": ["ctx"],
        "label": i % 2,
    }
    for i in range(8)
]


def policy_judge():
    """P(yes) by the instruction the judge was given:
    RULE-A: 0.55 / 0.45 (every decision right, but timid: MSE 0.2025);
    RULE-B: 0.95 / 0.60 (half the decisions wrong, but closer on average: MSE 0.18125);
    anything else: 0.5 for all (MSE 0.25, accuracy 0.5)."""

    def answer(request):
        instruction = str(request.messages[0].content)
        positive = "indeed" in last_items(request)
        if "RULE-A" in instruction:
            return verdict(0.55 if positive else 0.45)
        if "RULE-B" in instruction:
            return verdict(0.95 if positive else 0.60)
        return verdict(0.5)

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


def writer_llm(*instructions):
    """Writes the given instructions in turn (then the last again), whatever it is asked."""
    queue = list(instructions)

    def answer(request):
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        schema_names = repr(request.output)
        if "feedback" in schema_names:
            return json.dumps({"feedback": ["be stricter"], "instruction": text})
        return json.dumps({"instruction": text})

    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


@pytest.mark.parametrize(
    ("loss", "winner"),
    [(BinaryMetricLoss(), "RULE-A"), (MSELoss(), "RULE-B"), (HuberLoss(delta=1.0), "RULE-B")],
)
def test_genetic_optimizer_keeps_the_best_candidate_under_each_loss(loss, winner):
    judge, _ = policy_judge()
    writer, _ = writer_llm("RULE-A: check each claim.", "RULE-B: check each claim.")
    metric = Faithfulness(llm=judge)
    optimizer = GeneticOptimizer(
        max_steps=3, population_size=3, mutation_rate=0.5, show_progress=False
    )
    found = metric.optimize_prompts(
        from_rows(ROWS), InstructionConfig(llm=writer, optimizer=optimizer, loss=loss)
    )
    assert list(found) == ["supported"]
    assert found["supported"].startswith(winner)
    run = optimizer.last_run
    losses = {c["instruction"][:6]: c["loss"] for c in run["candidates"]}
    assert losses["RULE-A"] == pytest.approx(
        1.0 if loss.higher_is_better else (0.2025 if isinstance(loss, MSELoss) else 0.10125)
    )
    assert run["best_loss"] == (max if loss.higher_is_better else min)(losses.values())
    # the metric now sends the winning instruction
    assert metric.alignment.instructions["supported"] == found["supported"]


def test_optimized_metric_sends_the_new_instruction():
    judge, provider = policy_judge()
    writer, _ = writer_llm("RULE-A: check each claim.", "RULE-B: check each claim.")
    metric = Faithfulness(llm=judge)
    metric.optimize_prompts(
        from_rows(ROWS),
        InstructionConfig(
            llm=writer,
            optimizer=GeneticOptimizer(max_steps=1, population_size=3, show_progress=False),
        ),
    )  # default loss for yes/no labels: BinaryMetricLoss
    provider.requests.clear()
    metric.score(response="Claim 1 indeed.", retrieved_contexts=["ctx"])
    assert provider.requests[0].messages[0].content.startswith("RULE-A")


def test_the_call_budget_is_never_exceeded():
    judge, judge_provider = policy_judge()
    writer, writer_provider = writer_llm("RULE-A: x.", "RULE-B: y.", "RULE-C: z.")
    optimizer = GeneticOptimizer(
        max_steps=10, population_size=4, mutation_rate=1.0, max_calls=30, show_progress=False
    )
    Faithfulness(llm=judge).optimize_prompts(
        from_rows(ROWS), InstructionConfig(llm=writer, optimizer=optimizer)
    )
    calls = len(judge_provider.requests) + len(writer_provider.requests)
    assert calls <= 30 and optimizer.last_run["calls"] == calls
    assert optimizer.last_run["stopped"] in ("budget", "patience")
    with pytest.raises(UsageError, match="cannot score even the current instruction"):
        Faithfulness(llm=judge).optimize_prompts(
            from_rows(ROWS),
            InstructionConfig(
                llm=writer, optimizer=GeneticOptimizer(max_calls=5, show_progress=False)
            ),
        )


def test_an_optimizer_never_sees_the_test_split():
    rows = from_rows(
        ROWS
        + [{**r, "id": f"t{i}", "response": f"Secret test {i} indeed."} for i, r in enumerate(ROWS)]
    )
    train = rows[:8]
    judge, judge_provider = policy_judge()
    writer, writer_provider = writer_llm("RULE-A: x.", "RULE-B: y.")
    Faithfulness(llm=judge).optimize_prompts(
        train,
        InstructionConfig(
            llm=writer,
            optimizer=GeneticOptimizer(
                max_steps=2, population_size=3, mutation_rate=1.0, show_progress=False
            ),
        ),
    )
    sent = [
        str(m.content)
        for r in judge_provider.requests + writer_provider.requests
        for m in r.messages
    ]
    assert sent and not any("Secret test" in text for text in sent)


def test_align_and_validate_optimizes_on_the_training_part_of_its_own_split():
    rows = from_rows([{**r, "response": f"Row {r['id']} {r['response']}"} for r in ROWS])
    judge, judge_provider = policy_judge()
    writer, writer_provider = writer_llm("RULE-A: x.", "RULE-B: y.")
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=judge)
    report = metric.align_and_validate(
        rows,
        embedding_model=embeddings,
        test_size=0.25,
        random_state=3,
        show_progress=False,
        report_options={"n_resamples": 20},
        instruction_config=InstructionConfig(
            llm=writer,
            optimizer=GeneticOptimizer(
                max_steps=1, population_size=2, mutation_rate=1.0, show_progress=False
            ),
        ),
    )
    held_out = [f"Row {row['id']} " for row in report.rows]
    assert len(held_out) == 2
    written = [str(m.content) for r in writer_provider.requests for m in r.messages]
    assert written and not any(t in text for t in held_out for text in written)
    judged = [str(r.messages[-1].content) for r in judge_provider.requests]
    # each held-out row is judged twice (before and after), never while optimizing or fitting
    assert sorted(sum(t in text for text in judged) for t in held_out) == [2, 2]
    assert metric.alignment.instructions["supported"].startswith("RULE-")


def test_template_candidates_must_keep_the_placeholders():
    from assay.metrics.custom.llm_metrics import DiscreteMetric

    optimizer = GeneticOptimizer(show_progress=False)
    optimizer.metric = DiscreteMetric(name="c", prompt="Judge {response} against {reference}")
    assert optimizer.acceptable("template", "Look at {reference} then {response}")
    assert not optimizer.acceptable("template", "Look at {response}")
    assert not optimizer.acceptable("template", "Look at {response} {reference} {extra}")
    assert not optimizer.acceptable("template", "Unbalanced {response")


def test_legacy_train_on_an_annotation_file(tmp_path):
    annotation = {
        "faithfulness": [
            {
                "metric_input": {
                    "response": f"The meeting is in rome {'indeed' if i % 2 else 'maybe'} {i}.",
                    "retrieved_contexts": ["The meeting is in rome."],
                },
                "metric_output": i % 2,
                "prompts": {},
                "is_accepted": i % 3 != 0,
            }
            for i in range(10)
        ]
    }
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps(annotation))
    judge, _ = policy_judge()
    embeddings, _ = keyword_embedder()
    metric = Faithfulness(llm=judge)
    metric.train(
        path,
        demonstration_config=DemonstrationConfig(embedding=embeddings, top_k=2, threshold=None),
    )
    state = metric.alignment
    assert len(state.examples) == 10 and state.k == 2
    labels = [e.label for e in state.examples]
    assert labels[0] == 1 and labels[3] == 0 and labels[1] == 1  # rejected verdicts flipped
    with pytest.raises(UsageError, match=r"\.json"):
        metric.train(tmp_path / "labels.jsonl")


def test_genetic_optimizer_on_a_template_metric_keeps_its_placeholders():
    from assay.metrics.custom.llm_metrics import DiscreteMetric

    def answer(request):
        text = str(request.messages[-1].content)
        right = "STRICT" in text
        said = ("pass" if "correct" in text else "fail") if right else "pass"
        return json.dumps({"reason": "scripted", "value": said})

    judge = LLM(ScriptedProvider([answer], repeat_last=True))
    writer, _ = writer_llm("Judge it, no placeholder here.", "STRICT: is this right? {response}")
    rows = from_rows(
        [
            {
                "id": f"t{i}",
                "response": f"answer {i} {'correct' if i % 2 else 'wrong'}",
                "label": "pass" if i % 2 else "fail",
            }
            for i in range(6)
        ]
    )
    metric = DiscreteMetric(name="check", prompt="Is this right? {response}", llm=judge)
    optimizer = GeneticOptimizer(
        max_steps=2, population_size=3, mutation_rate=0.0, show_progress=False
    )
    found = metric.optimize_prompts(rows, InstructionConfig(llm=writer, optimizer=optimizer))
    assert found == {"template": "STRICT: is this right? {response}"}
    scored = [c["instruction"] for c in optimizer.last_run["candidates"]]
    assert "Judge it, no placeholder here." not in scored  # refused, never scored
    assert metric.score(response="answer 9 correct").value == "pass"
    assert metric.score(response="answer 8 wrong").value == "fail"
