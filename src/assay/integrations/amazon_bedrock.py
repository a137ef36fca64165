"""Amazon Bedrock Agents traces to assay messages (Ragas' `ragas.integrations.amazon_bedrock`).

    response = bedrock_agent_runtime.invoke_agent(..., inputText=question, enableTrace=True)
    traces = [event["trace"] for event in response["completion"] if "trace" in event]
    messages = convert_to_ragas_messages(traces, user_input=question)

Reads plain dicts (boto3 is not needed): the trace parts of `invoke_agent`'s event stream, whole
stream events (`{"trace": ...}`, `{"chunk": {"bytes": ...}}`), or bare `orchestrationTrace`
dicts. Each orchestration step becomes:

- `rationale` -> the text of the `AIMessage` that makes the step's calls;
- `invocationInput` -> a `ToolCall` on that message: an action group call is named by its
  `function` (or `apiPath` for OpenAPI action groups) with its `parameters` and JSON request
  body properties as arguments (values stay the strings Bedrock sends); a knowledge base lookup
  is `knowledge_base_lookup(query=..., knowledge_base_id=...)`; a collaborator agent is called
  by its name with `input`; the code interpreter is `code_interpreter(code=...)`;
- `observation` -> a `ToolMessage` with the action group's output, the retrieved passages
  (joined by blank lines), the collaborator's or the interpreter's output; its `finalResponse`
  (or `repromptResponse`, when the agent asks the user) -> the closing `AIMessage`.

The user's question is `user_input` when given, else the last user turn of the first model
invocation's prompt (Anthropic-style JSON `messages`), else there is no `HumanMessage`.
Answer chunks are used when no step gave a final response. Pre/post-processing, routing and
guardrail traces are read past; a `failureTrace` raises `AgentRunFailed` with its reason.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from assay.integrations._messages import (
    AgentRunFailed,
    ConvertedMessage,
    bad_input,
    checked,
    metadata_of,
    tool_call,
)
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage


def convert_to_ragas_messages(
    traces: Any, *, user_input: str | None = None, metadata: bool = False
) -> list[ConvertedMessage]:
    """Convert the trace events of one `invoke_agent(enableTrace=True)` call."""
    steps = _Steps(metadata)
    for index, part in _orchestration_parts(traces, steps):
        steps.add(index, part)
    question = user_input if user_input is not None else steps.prompted_question
    messages: list[ConvertedMessage] = []
    if question is not None:
        messages.append(HumanMessage(content=question))
    messages.extend(steps.messages())
    return checked(messages)


def extract_kb_trace(traces: Any) -> list[dict[str, Any]]:
    """One row per knowledge base lookup: its query as `user_input`, the passages it retrieved as
    `retrieved_contexts`, and the agent's final answer as `response` (None when there is none),
    ready to score retrieval with single-turn metrics."""
    messages = convert_to_ragas_messages(traces, metadata=True)
    final = next(
        (m.content for m in reversed(messages) if isinstance(m, AIMessage) and not m.tool_calls),
        None,
    )
    rows: list[dict[str, Any]] = []
    for message in messages:
        metadata = message.metadata if isinstance(message, ToolMessage) else None
        if metadata and metadata.get("passages") is not None:
            rows.append(
                {
                    "user_input": metadata["query"],
                    "retrieved_contexts": list(metadata["passages"]),
                    "response": final,
                }
            )
    return rows


def _orchestration_parts(traces: Any, steps: _Steps) -> Iterable[tuple[int, Mapping[str, Any]]]:
    if isinstance(traces, (str, bytes, Mapping)) or not isinstance(traces, Iterable):
        raise bad_input(0, "input", "traces", "must be a list of trace events")
    for index, event in enumerate(traces):
        if not isinstance(event, Mapping):
            raise bad_input(
                index, "trace event", "trace", f"must be a dict, got {type(event).__name__}"
            )
        if "chunk" in event:
            steps.add_chunk(index, event["chunk"])
            continue
        part = event
        while "trace" in part and isinstance(part["trace"], Mapping):
            if "sessionId" in part:
                steps.session = part["sessionId"]
            part = part["trace"]
        if "failureTrace" in part:
            failure = part["failureTrace"] or {}
            raise AgentRunFailed(
                "Amazon Bedrock agent",
                str(failure.get("failureReason") or "failureTrace without a reason"),
                run=_run_name(steps.session, failure.get("traceId")),
                code=failure.get("failureType"),
                index=index,
            )
        if "orchestrationTrace" in part:
            yield index, part["orchestrationTrace"] or {}


def _run_name(session: str | None, trace_id: str | None) -> str | None:
    named = [f"session {session}" if session else None, f"trace {trace_id}" if trace_id else None]
    return ", ".join(n for n in named if n) or None


class _Steps:
    def __init__(self, metadata: bool) -> None:
        self.metadata = metadata
        self.session: str | None = None
        self.prompted_question: str | None = None
        self.entries: list[dict[str, Any]] = []
        self.rationale: str | None = None
        self.queries: list[str] = []  # knowledge base queries awaiting their passages
        self.chunks: list[str] = []
        self.finished = False
        self._first_prompt_seen = False

    def add_chunk(self, index: int, chunk: Any) -> None:
        data = chunk.get("bytes") if isinstance(chunk, Mapping) else None
        if isinstance(data, str):  # a stream saved as JSON carries the bytes base64-encoded
            data = base64.b64decode(data)
        if not isinstance(data, (bytes, bytearray)):
            raise bad_input(index, "chunk event", "chunk.bytes", "must be bytes")
        self.chunks.append(bytes(data).decode("utf-8"))

    def add(self, index: int, part: Mapping[str, Any]) -> None:
        what = "orchestrationTrace"
        if "modelInvocationInput" in part and not self._first_prompt_seen:
            self._first_prompt_seen = True
            self.prompted_question = _question_in_prompt(part["modelInvocationInput"])
        if "rationale" in part:
            self.rationale = (part["rationale"] or {}).get("text") or ""
        if "invocationInput" in part:
            self._call(index, part["invocationInput"] or {}, what)
        if "observation" in part:
            self._observation(index, part["observation"] or {}, what)

    def _call(self, index: int, invocation: Mapping[str, Any], what: str) -> None:
        trace_id = invocation.get("traceId")
        call, details = _tool_call_of(index, invocation, what)
        last = self.entries[-1] if self.entries else None
        if last is None or last["kind"] != "ai" or last["trace_id"] != trace_id:
            last = {
                "kind": "ai",
                "content": self.rationale or "",
                "calls": [],
                "trace_id": trace_id,
            }
            last["meta"] = {"trace_id": trace_id, "calls": []}
            self.entries.append(last)
            self.rationale = None
        last["calls"].append(call)
        last["meta"]["calls"].append(details)
        if call.name == "knowledge_base_lookup":
            self.queries.append(call.args.get("query", ""))

    def _observation(self, index: int, observation: Mapping[str, Any], what: str) -> None:
        trace_id = observation.get("traceId")
        for key in ("finalResponse", "repromptResponse"):
            if key in observation:
                text = (observation[key] or {}).get("text")
                if not isinstance(text, str):
                    raise bad_input(index, what, f"observation.{key}.text", "must be a string")
                final = {"trace_id": trace_id, "rationale": self.rationale, "kind": key}
                self.entries.append({"kind": "final", "content": text, "meta": final})
                self.rationale = None
                self.finished = True
                return
        meta: dict[str, Any] = {"trace_id": trace_id}
        if "actionGroupInvocationOutput" in observation:
            text = (observation["actionGroupInvocationOutput"] or {}).get("text", "")
        elif "knowledgeBaseLookupOutput" in observation:
            references = (observation["knowledgeBaseLookupOutput"] or {}).get("retrievedReferences")
            passages = [_passage(index, n, ref, what) for n, ref in enumerate(references or [])]
            text = "\n\n".join(passages)
            meta["passages"] = passages
            meta["query"] = self.queries.pop(0) if self.queries else None
        elif "agentCollaboratorInvocationOutput" in observation:
            output = (observation["agentCollaboratorInvocationOutput"] or {}).get("output") or {}
            text = output.get("text", "")
        elif "codeInterpreterInvocationOutput" in observation:
            output = observation["codeInterpreterInvocationOutput"] or {}
            text = output.get("executionError") or output.get("executionOutput") or ""
        else:
            return  # e.g. an observation of type REPROMPT with nothing to show
        if not any(entry["kind"] == "ai" for entry in self.entries):
            raise bad_input(index, what, "observation", "is a tool output before any tool call")
        self.entries.append({"kind": "tool", "content": str(text), "meta": meta})

    def messages(self) -> list[ConvertedMessage]:
        built: list[ConvertedMessage] = []
        for entry in self.entries:
            meta = metadata_of(self.metadata, **entry["meta"])
            if entry["kind"] == "ai":
                built.append(
                    AIMessage(content=entry["content"], tool_calls=entry["calls"], metadata=meta)
                )
            elif entry["kind"] == "tool":
                built.append(ToolMessage(content=entry["content"], metadata=meta))
            else:
                built.append(AIMessage(content=entry["content"], metadata=meta))
        if not self.finished and self.chunks:
            built.append(AIMessage(content="".join(self.chunks)))
        return built


def _tool_call_of(
    index: int, invocation: Mapping[str, Any], what: str
) -> tuple[ToolCall, dict[str, Any]]:
    if "actionGroupInvocationInput" in invocation:
        group = invocation["actionGroupInvocationInput"] or {}
        field = "invocationInput.actionGroupInvocationInput"
        args = _parameters(index, group.get("parameters"), f"{field}.parameters", what)
        body = ((group.get("requestBody") or {}).get("content") or {}).get("application/json")
        if body is not None:
            args.update(_parameters(index, body.get("properties"), f"{field}.requestBody", what))
        name = group.get("function") or group.get("apiPath")
        named = {"action_group": "actionGroupName", "verb": "verb", "api_path": "apiPath"}
        details = {key: group[raw] for key, raw in named.items() if group.get(raw) is not None}
        return tool_call(name, args, index=index, what=what, field=f"{field}.function"), details
    if "knowledgeBaseLookupInput" in invocation:
        lookup = invocation["knowledgeBaseLookupInput"] or {}
        args = {"query": lookup.get("text", ""), "knowledge_base_id": lookup.get("knowledgeBaseId")}
        return ToolCall(name="knowledge_base_lookup", args=args), {}
    if "agentCollaboratorInvocationInput" in invocation:
        collaborator = invocation["agentCollaboratorInvocationInput"] or {}
        args = {"input": (collaborator.get("input") or {}).get("text", "")}
        field = "invocationInput.agentCollaboratorInvocationInput.agentCollaboratorName"
        name = collaborator.get("agentCollaboratorName")
        return tool_call(name, args, index=index, what=what, field=field), {}
    if "codeInterpreterInvocationInput" in invocation:
        code = (invocation["codeInterpreterInvocationInput"] or {}).get("code", "")
        return ToolCall(name="code_interpreter", args={"code": code}), {}
    raise bad_input(
        index,
        what,
        "invocationInput",
        f"has none of the known invocation kinds (got keys {sorted(invocation)})",
    )


def _parameters(index: int, parameters: Any, field: str, what: str) -> dict[str, Any]:
    if parameters is None:
        return {}
    if not isinstance(parameters, list):
        raise bad_input(index, what, field, "must be a list of {name, type, value}")
    args: dict[str, Any] = {}
    for position, parameter in enumerate(parameters):
        name = parameter.get("name") if isinstance(parameter, Mapping) else None
        if not isinstance(name, str) or not name:
            raise bad_input(index, what, f"{field}[{position}].name", "is missing")
        args[name] = parameter.get("value")
    return args


def _passage(index: int, position: int, reference: Any, what: str) -> str:
    text = ((reference or {}).get("content") or {}).get("text")
    if not isinstance(text, str):
        field = (
            f"observation.knowledgeBaseLookupOutput.retrievedReferences[{position}].content.text"
        )
        raise bad_input(index, what, field, "must be a string")
    return text


def _question_in_prompt(invocation: Mapping[str, Any]) -> str | None:
    """The last user turn of a prompt sent as Anthropic-style JSON, or None for other shapes."""
    try:
        prompt = json.loads(invocation.get("text") or "")
    except (json.JSONDecodeError, TypeError):
        return None
    turns = prompt.get("messages") if isinstance(prompt, Mapping) else None
    for turn in reversed(turns or []):
        if not isinstance(turn, Mapping) or turn.get("role") != "user":
            continue
        content = turn.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                p.get("text", "")
                for p in content
                if isinstance(p, Mapping) and p.get("type") == "text"
            ]
            if texts:
                return "".join(texts)
    return None


__all__ = ["AgentRunFailed", "convert_to_ragas_messages", "extract_kb_trace"]
