"""A simulation on the embedded runtime (SmolLM2 stands in for the judge): plumbing only. The user
and the goal judge are the embedded model (the shared test settings: short answers, no retries);
a 135M model may not play the user well, so what is pinned is that every conversation ends as an
outcome or a typed error, that the local model answered, and that nothing was charged."""

from __future__ import annotations

import pytest

from assay.schema.messages import AIMessage, HumanMessage
from assay.simulation import Scenario, simulate
from tests.local.conftest import make_llm, needs_smollm2

TYPED_FAILURES = {
    "SimulatedUserFailed",
    "OutputParseError",
    "OutputTruncated",
    "AgentLooped",
    "ModelError",
}


def shop_agent(conversation: list) -> str:
    asked = conversation[-1].content if conversation else ""
    return f"Your order ships on Monday. (You said: {asked[:60]})"


@pytest.mark.slow  # two conversations of SmolLM2 turns, ~30 s
@needs_smollm2
def test_conversations_are_simulated_on_the_embedded_model_by_default():
    scenarios = [
        Scenario(persona="a customer in a hurry", goal="learn when order 5521 ships"),
        Scenario(persona="a polite shopper", goal="find out the shipping day of an order"),
    ]
    local = make_llm(max_tokens=160)
    result = simulate(
        shop_agent, scenarios, user_llm=local, judge_llm=local, max_turns=2, show_progress=False
    )
    assert len(result) == 2
    for conversation in result.conversations:
        if conversation.error is None:
            assert conversation.ended in ("goal_met", "gave_up", "max_turns")
            assert isinstance(conversation.messages[0], HumanMessage)
            assert any(isinstance(m, AIMessage) for m in conversation.messages)
        else:
            assert conversation.error.error_type in TYPED_FAILURES, conversation.error
    usage = result.usage()
    assert usage.requests >= 2  # the embedded model played the user (and judged) at least once each
    assert usage.cost == 0.0
