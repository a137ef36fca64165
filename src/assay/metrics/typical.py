"""A metric's model calls per sample, from its own `estimate()` on one typical sample.

A metric states what it spends in one place, its `estimate(sample)`, which the engine uses for
`--estimate`, budgets and progress. `assay metrics` and the documentation describe a metric's
cost by running that same method on the typical samples below (a question, a five-sentence
answer, three passages of ~800 characters; a six-message conversation), so a description can
never drift from what a run is planned with.
"""

from __future__ import annotations

from assay.metrics.base import CallEstimate, Metric
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.schema.samples import MultiTurnSample, SingleTurnSample

_PASSAGE = (
    "The Eiffel Tower was built for the 1889 World's Fair in Paris to celebrate the centenary of "
    "the French Revolution. It is 330 metres tall and was the tallest man-made structure in the "
    "world until 1930. Gustave Eiffel's company designed and built it; the engineers Maurice "
    "Koechlin and Emile Nouguier drew the first plans. About seven million people visit it each "
    "year, and it is repainted every seven years to protect the iron from rust. "
)

TYPICAL_SINGLE_TURN = SingleTurnSample(
    user_input="When was the Eiffel Tower built, and how tall is it?",
    response=(
        "The Eiffel Tower was built for the 1889 World's Fair. It stands 330 metres tall. "
        "Gustave Eiffel's company designed and built it. It was the tallest structure in the "
        "world until 1930. About seven million people visit it every year."
    ),
    retrieved_contexts=[_PASSAGE * 2, _PASSAGE * 2, _PASSAGE * 2],
    reference_contexts=[_PASSAGE * 2],
    retrieved_context_ids=["doc-1", "doc-2", "doc-3"],
    reference_context_ids=["doc-1"],
    reference="It was built in 1889 for the World's Fair and is 330 metres tall.",
    rubrics={"score1_description": "wrong", "score5_description": "complete and correct"},
)

TYPICAL_MULTI_TURN = MultiTurnSample(
    user_input=[
        HumanMessage(content="Book me a table for two in Paris tomorrow at 8pm."),
        AIMessage(
            content="Looking for a table.",
            tool_calls=[ToolCall(name="find_table", args={"city": "Paris", "people": 2})],
        ),
        ToolMessage(content="Le Petit Zinc, 20:00, confirmed"),
        AIMessage(content="Booked: Le Petit Zinc tomorrow at 8pm for two."),
        HumanMessage(content="Thanks! Is it near the Eiffel Tower?"),
        AIMessage(content="It is about 2 km away, a short taxi ride."),
    ],
    reference="A table for two in Paris tomorrow at 8pm is booked.",
    reference_tool_calls=[ToolCall(name="find_table", args={"city": "Paris", "people": 2})],
    reference_topics=["restaurants", "travel"],
)


def typical_calls(metric: Metric) -> CallEstimate:
    """What `metric` expects to spend on the typical sample of the kind it scores."""
    kind = metric.sample_kinds[0]
    sample = TYPICAL_MULTI_TURN if kind == "multi_turn" else TYPICAL_SINGLE_TURN
    return metric.estimate(sample)


__all__ = ["TYPICAL_MULTI_TURN", "TYPICAL_SINGLE_TURN", "typical_calls"]
