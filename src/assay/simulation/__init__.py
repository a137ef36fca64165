"""Simulated users: a model plays the user of your agent, scenario by scenario, before real users do.

    from assay.simulation import Scenario, simulate

    result = simulate(my_agent, [Scenario(persona="...", goal="...")], max_turns=6)
    result.counts()            # {"goal_met": ..., "gave_up": ..., "max_turns": ..., "error": ...}
    evaluate(result.dataset, metrics=[AgentGoalAccuracyWithReference()])

`scenario.py` holds scenarios (written, loaded, made from a test set), `agents.py` and
`http_agent.py` the agent under test, `roles.py` the user and judge models, `conversation.py` one
conversation turn by turn, `run.py` the run (concurrency, resume, budget, progress), `estimate.py` its forecast,
`result.py` what it returns, `file_run.py` what `assay simulate` calls.
"""

from assay.simulation.agents import LangGraphAgent, LlamaIndexAgent, OpenAIAgentsAgent
from assay.simulation.conversation import Conversation
from assay.simulation.errors import (
    AgentEndpointError,
    AgentLooped,
    SimulatedUserFailed,
    UnreadableAgentReply,
)
from assay.simulation.estimate import SimulationEstimate, estimate_simulation
from assay.simulation.http_agent import HttpAgent
from assay.simulation.result import SimulationResult, print_simulation
from assay.simulation.run import asimulate, simulate
from assay.simulation.scenario import Scenario, load_scenarios, scenarios_from_testset

__all__ = [
    "AgentEndpointError",
    "AgentLooped",
    "Conversation",
    "HttpAgent",
    "LangGraphAgent",
    "LlamaIndexAgent",
    "OpenAIAgentsAgent",
    "Scenario",
    "SimulatedUserFailed",
    "SimulationEstimate",
    "SimulationResult",
    "UnreadableAgentReply",
    "asimulate",
    "estimate_simulation",
    "load_scenarios",
    "print_simulation",
    "scenarios_from_testset",
    "simulate",
]
