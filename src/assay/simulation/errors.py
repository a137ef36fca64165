"""What can go wrong in a simulated conversation, on the agent's side or the simulated user's.

Each becomes that conversation's typed `Error` outcome (its class name is the `error_type`); the
other conversations of the run go on. An agent that raises its own exception is recorded as an
`AgentError` outcome naming the exception, without a class of its own here.
"""

from __future__ import annotations

from assay.errors import AssayError


class UnreadableAgentReply(AssayError, ValueError):
    """The agent answered with something that is not a reply: None, a number, an empty text, a
    user message, tool outputs with no tool call before them, or a turn that ends on a tool output."""


class AgentLooped(AssayError):
    """The agent repeated itself: the same reply (or the same tool call in a row) `loop_limit`
    times, so the conversation would go nowhere."""


class AgentEndpointError(AssayError):
    """An HTTP agent could not be reached, answered with an error status, or sent a body that is
    not JSON."""


class SimulatedUserFailed(AssayError):
    """The user model's answer cannot be used as the user's turn: it stopped before writing its
    first message, or chose to go on with an empty message."""


__all__ = ["AgentEndpointError", "AgentLooped", "SimulatedUserFailed", "UnreadableAgentReply"]
