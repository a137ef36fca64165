"""Amazon Bedrock Agents trace events -> assay messages. The events are built in the shape
`invoke_agent(enableTrace=True)` streams them (no AWS call is made)."""

from __future__ import annotations

import base64
import json

import pytest

from assay import AIMessage, DataError, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.integrations._messages import AgentRunFailed
from assay.integrations.amazon_bedrock import convert_to_ragas_messages, extract_kb_trace

SESSION = "sess-42"


def wrap(orchestration: dict) -> dict:
    """One event of the completion stream: {"trace": {ids..., "trace": {"orchestrationTrace"}}}."""
    return {
        "trace": {
            "agentAliasId": "TSTALIASID",
            "agentId": "AGENT123",
            "agentVersion": "DRAFT",
            "sessionId": SESSION,
            "trace": {"orchestrationTrace": orchestration},
        }
    }


def prompt(question: str) -> dict:
    text = json.dumps(
        {
            "system": "You are a restaurant booking agent.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": question}]}],
        }
    )
    return {"modelInvocationInput": {"text": text, "traceId": "t-0", "type": "ORCHESTRATION"}}


def booking_stream() -> list[dict]:
    return [
        wrap(prompt("Book a table for 2 tonight and tell me the menu.")),
        wrap(
            {
                "modelInvocationOutput": {
                    "metadata": {"usage": {"inputTokens": 900, "outputTokens": 80}},
                    "rawResponse": {"content": "..."},
                    "traceId": "t-0",
                }
            }
        ),
        wrap(
            {
                "rationale": {
                    "text": "I will check the menu in the knowledge base.",
                    "traceId": "t-0",
                }
            }
        ),
        wrap(
            {
                "invocationInput": {
                    "invocationType": "KNOWLEDGE_BASE",
                    "traceId": "t-0",
                    "knowledgeBaseLookupInput": {
                        "knowledgeBaseId": "KB1",
                        "text": "tonight's menu",
                    },
                }
            }
        ),
        wrap(
            {
                "observation": {
                    "type": "KNOWLEDGE_BASE",
                    "traceId": "t-0",
                    "knowledgeBaseLookupOutput": {
                        "retrievedReferences": [
                            {
                                "content": {"text": "Tonight: mushroom risotto."},
                                "location": {
                                    "type": "S3",
                                    "s3Location": {"uri": "s3://menus/a.txt"},
                                },
                            },
                            {
                                "content": {"text": "Dessert: tiramisu."},
                                "location": {
                                    "type": "S3",
                                    "s3Location": {"uri": "s3://menus/b.txt"},
                                },
                            },
                        ]
                    },
                }
            }
        ),
        wrap(prompt("ignored: only the first model invocation is read")),
        wrap({"rationale": {"text": "Now I book the table.", "traceId": "t-1"}}),
        wrap(
            {
                "invocationInput": {
                    "invocationType": "ACTION_GROUP",
                    "traceId": "t-1",
                    "actionGroupInvocationInput": {
                        "actionGroupName": "bookings",
                        "function": "create_booking",
                        "executionType": "LAMBDA",
                        "parameters": [
                            {"name": "date", "type": "string", "value": "2026-12-01"},
                            {"name": "people", "type": "integer", "value": "2"},
                        ],
                    },
                }
            }
        ),
        wrap(
            {
                "observation": {
                    "type": "ACTION_GROUP",
                    "traceId": "t-1",
                    "actionGroupInvocationOutput": {"text": '{"booking_id": "B7"}'},
                }
            }
        ),
        wrap({"rationale": {"text": "Done; I can answer.", "traceId": "t-2"}}),
        wrap(
            {
                "observation": {
                    "type": "FINISH",
                    "traceId": "t-2",
                    "finalResponse": {
                        "text": "Booked (B7). Tonight: mushroom risotto and tiramisu."
                    },
                }
            }
        ),
        {"chunk": {"bytes": b"Booked (B7). Tonight: mushroom risotto and tiramisu."}},
    ]


def test_a_knowledge_base_and_action_group_run_converts():
    messages = convert_to_ragas_messages(
        [event["trace"] for event in booking_stream() if "trace" in event]
    )
    assert messages == [
        HumanMessage(content="Book a table for 2 tonight and tell me the menu."),
        AIMessage(
            content="I will check the menu in the knowledge base.",
            tool_calls=[
                ToolCall(
                    name="knowledge_base_lookup",
                    args={"query": "tonight's menu", "knowledge_base_id": "KB1"},
                )
            ],
        ),
        ToolMessage(content="Tonight: mushroom risotto.\n\nDessert: tiramisu."),
        AIMessage(
            content="Now I book the table.",
            tool_calls=[
                ToolCall(name="create_booking", args={"date": "2026-12-01", "people": "2"})
            ],
        ),
        ToolMessage(content='{"booking_id": "B7"}'),
        AIMessage(content="Booked (B7). Tonight: mushroom risotto and tiramisu."),
    ]
    MultiTurnSample(user_input=messages)
    # whole stream events (chunks included) give the same conversation: the chunk is not doubled
    assert convert_to_ragas_messages(booking_stream()) == messages


def test_user_input_overrides_the_prompt_and_metadata_keeps_trace_details():
    messages = convert_to_ragas_messages(
        booking_stream(), user_input="Table for two?", metadata=True
    )
    assert messages[0] == HumanMessage(content="Table for two?")
    assert messages[3].metadata["calls"] == [{"action_group": "bookings"}]
    assert messages[-1].metadata["rationale"] == "Done; I can answer."


def test_extract_kb_trace_gives_single_turn_rows():
    assert extract_kb_trace(booking_stream()) == [
        {
            "user_input": "tonight's menu",
            "retrieved_contexts": ["Tonight: mushroom risotto.", "Dessert: tiramisu."],
            "response": "Booked (B7). Tonight: mushroom risotto and tiramisu.",
        }
    ]


def test_openapi_action_groups_collaborators_and_answer_chunks_without_a_final_response():
    events = [
        wrap(
            {
                "invocationInput": {
                    "traceId": "t-0",
                    "actionGroupInvocationInput": {
                        "actionGroupName": "weather",
                        "apiPath": "/forecast",
                        "verb": "get",
                        "parameters": [{"name": "city", "type": "string", "value": "Oslo"}],
                        "requestBody": {
                            "content": {
                                "application/json": {
                                    "properties": [
                                        {"name": "days", "type": "integer", "value": "3"}
                                    ]
                                }
                            }
                        },
                    },
                }
            }
        ),
        wrap(
            {
                "invocationInput": {
                    "traceId": "t-0",
                    "agentCollaboratorInvocationInput": {
                        "agentCollaboratorName": "packer",
                        "input": {"text": "What to pack?"},
                    },
                }
            }
        ),
        wrap({"observation": {"traceId": "t-0", "actionGroupInvocationOutput": {"text": "rain"}}}),
        wrap(
            {
                "observation": {
                    "traceId": "t-0",
                    "agentCollaboratorInvocationOutput": {
                        "agentCollaboratorName": "packer",
                        "output": {"text": "an umbrella"},
                    },
                }
            }
        ),
        {"chunk": {"bytes": base64.b64encode(b"Pack an umbrella.").decode()}},  # saved as JSON
    ]
    messages = convert_to_ragas_messages(events, user_input="Trip to Oslo")
    assert messages[1] == AIMessage(
        content="",
        tool_calls=[
            ToolCall(name="/forecast", args={"city": "Oslo", "days": "3"}),
            ToolCall(name="packer", args={"input": "What to pack?"}),
        ],
    )
    assert [m.content for m in messages[2:]] == ["rain", "an umbrella", "Pack an umbrella."]


def test_a_failure_trace_is_a_typed_failure_naming_the_session():
    events = [
        *booking_stream()[:3],
        {
            "trace": {
                "sessionId": SESSION,
                "trace": {"failureTrace": {"failureReason": "Lambda timed out", "traceId": "t-0"}},
            }
        },
    ]
    with pytest.raises(AgentRunFailed) as caught:
        convert_to_ragas_messages(events)
    assert caught.value.run == "session sess-42, trace t-0" and caught.value.index == 3
    assert "Lambda timed out" in str(caught.value)


def test_malformed_traces_name_the_event_and_field():
    events = booking_stream()
    events[4]["trace"]["trace"]["orchestrationTrace"]["observation"]["knowledgeBaseLookupOutput"][
        "retrievedReferences"
    ][1] = {"content": {}}
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages(events)
    assert caught.value.row == 4
    assert (
        caught.value.field
        == "observation.knowledgeBaseLookupOutput.retrievedReferences[1].content.text"
    )
    with pytest.raises(DataError, match=r"index 0: .*invocationInput"):
        convert_to_ragas_messages([wrap({"invocationInput": {"traceId": "t", "somethingNew": {}}})])
    with pytest.raises(DataError, match=r"index 0: .*tool output before any tool call"):
        convert_to_ragas_messages(
            [wrap({"observation": {"actionGroupInvocationOutput": {"text": "x"}}})]
        )
    with pytest.raises(DataError, match=r"parameters\[0\]\.name"):
        convert_to_ragas_messages(
            [
                wrap(
                    {
                        "invocationInput": {
                            "actionGroupInvocationInput": {
                                "function": "f",
                                "parameters": [{"value": "1"}],
                            }
                        }
                    }
                )
            ]
        )
    with pytest.raises(DataError, match="must be a list"):
        convert_to_ragas_messages({"trace": {}})
