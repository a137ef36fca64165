"""The forecast of a simulation: an upper bound on its model calls, tokens and cost, made
before any call from the prompts rendered for each scenario and each model's price."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.engine.models import coerce_llm
from assay.prompts.render import render
from assay.simulation.roles import Roles, facts_text
from assay.simulation.scenario import load_scenarios


@dataclass(frozen=True)
class SimulationEstimate:
    """An upper bound on what a simulation will call, made before any call: every conversation
    is counted as running to its max_turns (one user and one judge call per turn), each turn
    adding `tokens_per_turn` to the conversation the next calls read."""

    conversations: int
    requests: int
    input_tokens: int
    output_tokens: int
    cost: float | None  # None when a model has no known price

    def __str__(self) -> str:
        cost = "unknown price" if self.cost is None else f"${self.cost:.4f}"
        return (
            f"at most {self.requests} model requests for {self.conversations} conversations: "
            f"{self.input_tokens:,} input + {self.output_tokens:,} output tokens, cost {cost}"
        )


def build_models(user_llm: Any, judge_llm: Any) -> tuple[Any, Any]:
    """The user and judge models: as given (strings built), else the configured default judge
    (ASSAY_LLM, else the embedded one) for both roles."""
    user = coerce_llm(user_llm, where="user_llm=")
    judge = coerce_llm(judge_llm, where="judge_llm=")
    if user is None or judge is None:
        from assay.models.defaults import default_llm

        default = judge or user or default_llm()
        user, judge = user or default, judge or default
    return user, judge


def estimate_simulation(
    scenarios: Any,
    *,
    user_llm: Any = None,
    judge_llm: Any = None,
    max_turns: int = 10,
    tokens_per_turn: int = 150,
    language: str = "english",
) -> SimulationEstimate:
    """The forecast of `simulate(..., estimate=True)`, from the prompts rendered for each
    scenario and each model's price; no model is called."""
    items = load_scenarios(scenarios)
    user, judge = build_models(user_llm, judge_llm)
    roles = Roles(user, judge, language)
    requests = input_tokens = output_tokens = 0
    user_cost = judge_cost = 0.0
    for scenario in items:
        values = {"persona": scenario.persona, "goal": scenario.goal}
        user_base = _tokens(
            render(roles.user_prompt, {**values, "facts": facts_text(scenario), "conversation": ""})
        )
        judge_base = _tokens(
            render(
                roles.goal_prompt,
                {
                    **values,
                    "reference_outcome": scenario.reference_outcome or "",
                    "conversation": "",
                },
            )
        )
        turns = scenario.max_turns or max_turns
        for turn in range(1, turns + 1):
            user_in = user_base + (turn - 1) * tokens_per_turn
            judge_in = judge_base + turn * tokens_per_turn
            requests += 2
            input_tokens += user_in + judge_in
            output_tokens += 60 + 40
            user_cost += _cost(user, user_in, 60) or 0.0
            judge_cost += _cost(judge, judge_in, 40) or 0.0
    priced = getattr(user, "price", None) is not None and getattr(judge, "price", None) is not None
    return SimulationEstimate(
        conversations=len(items),
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=user_cost + judge_cost if priced else None,
    )


def _tokens(messages: list[Any]) -> int:
    return sum(len(str(m.content)) for m in messages) // 4


def _cost(llm: Any, input_tokens: int, output_tokens: int) -> float | None:
    price = getattr(llm, "price", None)
    return price.cost(input_tokens, output_tokens) if price is not None else None


__all__ = ["SimulationEstimate", "build_models", "estimate_simulation"]
