"""Platform traces as trajectories: `MultiTurnSample`s with their tool calls and tool outputs.

    from assay.integrations.trajectory import trace_to_sample, to_conversation, traces_to_dataset

    sample = trace_to_sample(trace)            # one trace (its JSON dict, or a platform Trace)
    sample = to_conversation(session_traces)   # the traces of one session, joined
    dataset = traces_to_dataset(load_traces("traces.jsonl"), by="session")

Reads traces recorded by the platform SDK (`monitor`, `trace_function_call`) and by OTLP with the
GenAI or OpenInference conventions; works from the trace's JSON alone, so the library never
imports the platform (the SDK's `Trace.to_sample()` calls this). `chat.py` reads messages of any
provider's shape, `otel.py` the OTel attributes, `spans.py` the steps of a trace, `merge.py`
joins message lists, `convert.py` builds one trace's conversation, `sessions.py` sessions and
exports.
"""

from assay.integrations.trajectory.convert import trace_messages, trace_to_sample
from assay.integrations.trajectory.sessions import (
    convert_export,
    group_sessions,
    load_traces,
    session_id_of,
    to_conversation,
    traces_to_dataset,
)

__all__ = [
    "convert_export",
    "group_sessions",
    "load_traces",
    "session_id_of",
    "to_conversation",
    "trace_messages",
    "trace_to_sample",
    "traces_to_dataset",
]
