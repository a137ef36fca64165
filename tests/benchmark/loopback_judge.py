"""A tiny OpenAI-compatible judge on 127.0.0.1 for end-to-end benchmark tests (stdlib only).

It answers the two prompts faithfulness uses, without any model:
- the claims prompt: one claim per sentence of the <text> block, as {"claims": [...]};
- the verdict prompt: "N. yes" when at least 70% of a statement's words (4+ letters) occur in
  the <source> block, else "N. no".
Any other request gets an HTTP 400, so an unexpected prompt shows up as an error cell. The server
is the one fake OpenAI-compatible server of the tests, `tests/models/fake_openai.py`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.models.fake_openai import Behaviour, FakeOpenAI, RecordedRequest, dynamic, error, ok


def _block(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, flags=re.DOTALL)
    return found.group(1) if found else ""


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) >= 4}


def answer(messages: list[dict[str, Any]]) -> str | None:
    system = str(messages[0].get("content", "")) if messages else ""
    user = str(messages[-1].get("content", "")) if messages else ""
    if "split a piece of text into claims" in system:
        sentences = [
            s.strip() for s in re.split(r"(?<=[.!?])\s+", _block(user, "text")) if s.strip()
        ]
        return json.dumps({"claims": sentences})
    if "check numbered statements" in system:
        source = _words(_block(user, "source"))
        lines = []
        for number, statement in re.findall(
            r"^(\d+)\. (.*)$", _block(user, "items"), flags=re.MULTILINE
        ):
            words = _words(statement)
            supported = not words or len(words & source) / len(words) >= 0.7
            lines.append(f"{number}. {'yes' if supported else 'no'}")
        return "\n".join(lines)
    return None


def _reply(request: RecordedRequest) -> Behaviour:
    text = answer(request.messages) if request.path.endswith("/chat/completions") else None
    if text is None:
        return error(400, "the loopback judge does not know this prompt")
    prompt_chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    return ok(text, usage=(prompt_chars // 4, len(text) // 4 + 1))


class LoopbackJudge(FakeOpenAI):
    """The shared fake server (tests/models/fake_openai.py) answering with `answer`."""

    def __init__(self) -> None:
        super().__init__()
        self.default = dynamic(_reply)

    @property
    def model_string(self) -> str:
        return f"openai/loopback-judge@{self.url}"
