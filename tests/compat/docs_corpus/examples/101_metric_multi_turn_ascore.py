# ruff: noqa
# Docs: Overview of Metrics > Multi-turn metrics
# Changes:
#   - ragas -> assay in imports
#   - filled in: sample (the docs leave it to the reader)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.messages import HumanMessage, AIMessage  # filled in

from assay.metrics import AgentGoalAccuracy
from assay import MultiTurnSample

sample = MultiTurnSample(  # filled in
    user_input=[
        HumanMessage(content="Book a table for two at 8pm."),
        AIMessage(content="Your table for two is booked for 8pm."),
    ],
    reference="A table for two is booked at 8pm.",
)

scorer = AgentGoalAccuracy()
await scorer.multi_turn_ascore(sample)
