"""An agent behind an HTTP endpoint: an OpenAI-compatible chat endpoint or a plain JSON one.

    HttpAgent("http://127.0.0.1:8000/v1/chat/completions", model="my-agent")   # OpenAI shape
    HttpAgent("http://127.0.0.1:8000/chat")                                     # plain JSON

OpenAI-compatible (`protocol="openai"`, chosen for a URL ending in `/chat/completions`): each turn
POSTs `{"model": ..., "messages": [{"role": "user" | "assistant", "content": ...}]}`, the
conversation as its user saw it (the agent's own tool calls stay on its side), and reads
`choices[0].message`: its content, and its `tool_calls` when it reports them.

Plain JSON (`protocol="json"`): each turn POSTs `{"messages": [...]}`, the conversation as assay
messages (`{"type": "human" | "ai" | "tool", "content": ..., "tool_calls": [...]}`), and reads
from the answer either `messages` (a list of assay or OpenAI message dicts: the agent's tool
calls, tool outputs and final message) or `reply_field` (default "reply", a string), or a bare
JSON string.

An error status, a body that is not JSON or a connection that fails is an `AgentEndpointError`
with the status and the start of the body; it ends that conversation as an error.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx

from assay.errors import UsageError
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.simulation.errors import AgentEndpointError, UnreadableAgentReply

Protocol = Literal["auto", "openai", "json"]


class HttpAgent:
    """An agent reached over HTTP (see the module docstring for the two protocols)."""

    def __init__(
        self,
        url: str,
        *,
        protocol: Protocol = "auto",
        model: str = "agent",
        headers: dict[str, str] | None = None,
        reply_field: str = "reply",
        timeout: float = 120.0,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise UsageError(f"HttpAgent needs an http:// or https:// URL, got {url!r}")
        if protocol not in ("auto", "openai", "json"):
            raise UsageError(f"protocol must be 'auto', 'openai' or 'json', got {protocol!r}")
        if timeout <= 0:
            raise UsageError(f"timeout must be more than 0 seconds, got {timeout}")
        self.url = url
        self.protocol: Literal["openai", "json"] = (
            protocol
            if protocol != "auto"
            else ("openai" if url.rstrip("/").endswith("/chat/completions") else "json")
        )
        self.model = model
        self.headers = dict(headers or {})
        self.reply_field = reply_field
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"HttpAgent({self.url!r}, protocol={self.protocol!r})"

    def _body(self, conversation: list[HumanMessage | AIMessage | ToolMessage]) -> dict[str, Any]:
        if self.protocol == "openai":
            messages = [
                {
                    "role": "user" if isinstance(m, HumanMessage) else "assistant",
                    "content": m.content,
                }
                for m in conversation
                if not isinstance(m, ToolMessage) and m.content
            ]
            return {"model": self.model, "messages": messages}
        return {"messages": [m.model_dump(mode="json", exclude_none=True) for m in conversation]}

    async def __call__(self, conversation: list[HumanMessage | AIMessage | ToolMessage]) -> Any:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(
                    self.url, json=self._body(conversation), headers=self.headers
                )
        except httpx.HTTPError as exc:
            raise AgentEndpointError(
                f"{self.url}: {type(exc).__name__}: {exc or 'no answer'}"
            ) from None
        if response.status_code >= 400:
            raise AgentEndpointError(
                f"{self.url} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            payload = response.json()
        except ValueError:
            raise AgentEndpointError(
                f"{self.url} answered with a body that is not JSON: {response.text[:200]!r}"
            ) from None
        return self._read(payload)

    def _read(self, payload: Any) -> Any:
        if self.protocol == "openai":
            try:
                message = payload["choices"][0]["message"]
            except (KeyError, IndexError, TypeError):
                raise UnreadableAgentReply(
                    f"{self.url} answered without choices[0].message: {str(payload)[:200]}"
                ) from None
            return {**message, "role": "assistant"}
        if isinstance(payload, str):
            return payload
        if isinstance(payload, dict):
            if isinstance(payload.get("messages"), list):
                return payload["messages"]
            if self.reply_field in payload:
                return payload[self.reply_field]
            keys = ", ".join(sorted(map(str, payload))) or "none"
            raise UnreadableAgentReply(
                f"{self.url} answered an object with neither 'messages' nor "
                f"{self.reply_field!r} (its keys: {keys})"
            )
        raise UnreadableAgentReply(
            f"{self.url} answered a JSON {type(payload).__name__}; expected an object or a string"
        )


__all__ = ["HttpAgent"]
