"""What each LLM API's requests and answers look like, and `LLMCall`: one recorded call.

Everything here but `LLMCall.__init__` runs in the export thread: answers and stream chunks are
turned into the trace's input, output, model, usage and raw JSON only there.
"""

from __future__ import annotations

import logging
from typing import Any

from assay.platform.sdk.trace_body import jsonable

log = logging.getLogger("assay.platform.tracing")
_warned: set[str] = set()


def _warn_once(kind: str, message: str) -> None:
    if kind not in _warned:
        _warned.add(kind)
        log.warning("assay tracing: %s", message)


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return obj


# -- what each API's request and answer look like ------------------------------------------------
class Adapter:
    name = "llm"

    def input(self, kwargs: dict[str, Any]) -> Any:
        return jsonable(kwargs.get("messages"))

    def output(self, answer: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def usage(self, answer: Any) -> dict[str, int | None]:
        usage = _get(answer, "usage")
        return {
            "input_tokens": _get(usage, "input_tokens"),
            "output_tokens": _get(usage, "output_tokens"),
        }

    def assemble(self, chunks: list[Any]) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def tool_calls(self, answer: Any) -> list[dict[str, Any]]:
        """The tool calls the answer asked for, as `{"name", "arguments"}` (a trajectory's steps
        when the answer also had text, which `output` keeps alone)."""
        return []


def _call(name: Any, arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": jsonable(arguments)}


class ChatCompletions(Adapter):
    """OpenAI chat completions, and LiteLLM (which answers in the same shape)."""

    name = "chat.completions"

    def output(self, answer: Any) -> Any:
        message = _get((_get(answer, "choices") or [None])[0], "message")
        content = _get(message, "content")
        if content is None and _get(message, "tool_calls"):
            return jsonable(_get(message, "tool_calls"))
        return content

    def tool_calls(self, answer: Any) -> list[dict[str, Any]]:
        message = _get((_get(answer, "choices") or [None])[0], "message")
        return [
            _call(_get(call, "function", "name"), _get(call, "function", "arguments"))
            for call in _get(message, "tool_calls") or []
        ]

    def usage(self, answer: Any) -> dict[str, int | None]:
        usage = _get(answer, "usage")
        return {
            "input_tokens": _get(usage, "prompt_tokens"),
            "output_tokens": _get(usage, "completion_tokens"),
        }

    def assemble(self, chunks: list[Any]) -> dict[str, Any]:
        text, finish, model, ident, usage = [], None, None, None, None
        for chunk in chunks:
            model, ident = model or _get(chunk, "model"), ident or _get(chunk, "id")
            usage = _get(chunk, "usage") or usage
            for choice in _get(chunk, "choices") or []:
                piece = _get(choice, "delta", "content")
                if isinstance(piece, str):
                    text.append(piece)
                finish = _get(choice, "finish_reason") or finish
        return {
            "id": ident,
            "model": model,
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(text)},
                    "finish_reason": finish,
                }
            ],
            "usage": jsonable(usage),
            "stream_chunks": len(chunks),
        }


class Responses(Adapter):
    name = "responses"

    def input(self, kwargs: dict[str, Any]) -> Any:
        return jsonable(kwargs.get("input"))

    def output(self, answer: Any) -> Any:
        text = None if isinstance(answer, dict) else getattr(answer, "output_text", None)
        if isinstance(text, str):
            return text
        parts = []
        for item in _get(answer, "output") or []:
            for content in _get(item, "content") or []:
                if _get(content, "type") == "output_text":
                    parts.append(_get(content, "text") or "")
        return "".join(parts)

    def tool_calls(self, answer: Any) -> list[dict[str, Any]]:
        return [
            _call(_get(item, "name"), _get(item, "arguments"))
            for item in _get(answer, "output") or []
            if _get(item, "type") == "function_call"
        ]

    def assemble(self, chunks: list[Any]) -> dict[str, Any]:
        text, final = [], None
        for event in chunks:
            kind = _get(event, "type")
            if kind == "response.output_text.delta":
                text.append(_get(event, "delta") or "")
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                final = _get(event, "response")
        if final is not None:
            return {**jsonable(final), "stream_events": len(chunks)}
        return {
            "object": "response",
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "".join(text)}]}
            ],
            "stream_events": len(chunks),
        }


class AnthropicMessages(Adapter):
    name = "messages"

    def input(self, kwargs: dict[str, Any]) -> Any:
        messages = jsonable(kwargs.get("messages")) or []
        if kwargs.get("system") is not None:
            return [{"role": "system", "content": jsonable(kwargs["system"])}, *messages]
        return messages

    def output(self, answer: Any) -> Any:
        blocks = _get(answer, "content") or []
        return "".join(_get(b, "text") or "" for b in blocks if _get(b, "type") == "text")

    def tool_calls(self, answer: Any) -> list[dict[str, Any]]:
        return [
            _call(_get(block, "name"), _get(block, "input"))
            for block in _get(answer, "content") or []
            if _get(block, "type") == "tool_use"
        ]

    def assemble(self, chunks: list[Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "message", "role": "assistant"}
        text, usage = [], {"input_tokens": None, "output_tokens": None}
        for event in chunks:
            kind = _get(event, "type")
            if kind == "message_start":
                start = _get(event, "message")
                message.update(id=_get(start, "id"), model=_get(start, "model"))
                usage["input_tokens"] = _get(start, "usage", "input_tokens")
            elif kind == "content_block_delta" and _get(event, "delta", "type") == "text_delta":
                text.append(_get(event, "delta", "text") or "")
            elif kind == "message_delta":
                message["stop_reason"] = _get(event, "delta", "stop_reason")
                usage["output_tokens"] = _get(event, "usage", "output_tokens")
        message.update(content=[{"type": "text", "text": "".join(text)}], usage=usage)
        return {**message, "stream_events": len(chunks)}


CHAT, RESPONSES, ANTHROPIC = ChatCompletions(), Responses(), AnthropicMessages()


# -- one call ----------------------------------------------------------------------------------
class LLMCall:
    """What the application's thread keeps of one call; `process()` runs in the export thread."""

    __slots__ = (
        "adapter",
        "callback",
        "chunks",
        "contexts",
        "error",
        "finished",
        "input",
        "kwargs",
        "metadata",
        "model",
        "output",
        "processed",
        "raw_input",
        "raw_output",
        "result",
        "tool_calls",
        "usage",
    )  # fmt: skip

    def __init__(self, adapter: Adapter, kwargs: dict[str, Any], options: dict[str, Any]) -> None:
        self.adapter, self.kwargs = adapter, kwargs
        self.metadata, self.callback = options["metadata"], options["callback"]
        self.result: Any = None  # the SDK's answer (a whole call)
        self.chunks: list[Any] | None = None  # a stream's chunks
        self.error: BaseException | str | None = None  # the exception, then its text (process)
        self.contexts: list[str] = []
        self.processed = self.finished = False

    def record_chunk(self, chunk: Any) -> None:
        """One more chunk of a stream (`chunks` is made a list when the stream is wrapped)."""
        if self.chunks is None:
            self.chunks = []
        self.chunks.append(chunk)

    def process(self) -> None:
        if self.processed:
            return
        self.processed = True
        adapter, kwargs = self.adapter, self.kwargs
        answer = adapter.assemble(self.chunks) if self.chunks is not None else self.result
        self.raw_input = jsonable(kwargs)
        self.raw_output = jsonable(answer)
        self.input = adapter.input(kwargs)
        self.output = adapter.output(answer) if answer is not None else None
        self.tool_calls = adapter.tool_calls(answer) if answer is not None else []
        self.model = (_get(answer, "model") if answer is not None else None) or kwargs.get("model")
        usage = adapter.usage(answer) if answer is not None else {}
        self.usage = {k: v for k, v in usage.items() if isinstance(v, int)}
        if self.error is not None:
            self.error = f"{type(self.error).__name__}: {self.error}"
        if self.callback is not None:
            try:
                processed = self.callback(kwargs, answer)
            except Exception as exc:
                _warn_once("callback", f"the monitor callback failed ({exc!r}); stored unprocessed")
                processed = None
            if isinstance(processed, tuple) and len(processed) == 2:
                processed = {"input": processed[0], "output": processed[1]}
            if isinstance(processed, dict):
                if "input" in processed:
                    self.input = jsonable(processed["input"])
                if "output" in processed:
                    self.output = jsonable(processed["output"])


__all__ = ["ANTHROPIC", "CHAT", "RESPONSES", "Adapter", "LLMCall"]
