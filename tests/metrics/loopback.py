"""A scripted judge on the loopback fake OpenAI server, for end-to-end metric tests.

The metrics run through the real model path (`llm_factory` / `embedding_factory` with a base
URL, the `openai` SDK, HTTP to 127.0.0.1). The fake server's chat endpoint answers with a
`Judge`: it recognises the metric prompt a request carries (the system message starts with the
prompt's instruction) and replies with what the test scripted for that prompt id, optionally
picked by the text inside one of the request's input tags (`<text>`, `<source>`, ...). The
embeddings endpoint answers from a table of vectors the test chose. Anything unscripted gets an
HTTP 418 (not retried, not a "try another output mode" status) and is recorded, so the fixture
fails the test at teardown instead of hiding it.

    loop.judge({"claims": claims("a", "b"), "supported": verdict_lines("yes", "no")})
    loop.vectors({"question": [1, 0, 0], "generated": [3, 4, 0]})
    outcome, usage = loop.run(Faithfulness(llm=loop.llm(), statements="claims"), {...})
"""

from __future__ import annotations

import collections
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay import evaluate
from assay.metrics.base import Metric
from assay.models import RetryPolicy, embedding_factory, llm_factory
from assay.models.embeddings import Embeddings
from assay.models.llm import LLM
from assay.prompts.prompt import load_prompt
from assay.schema.outcome import Outcome
from assay.schema.samples import SingleTurnSample
from assay.schema.usage import Usage
from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    Reply,
    completion_payload,
    ok,
    serve,
)

FAST_RETRY = RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05)

# Every prompt the RAG, answer and general-purpose metrics send (English).
JUDGE_PROMPTS = (
    "answer_relevancy",
    "answers_question",
    "aspect_critic",
    "claims",
    "claims.coarse",
    "context_usefulness",
    "entities",
    "multimodal_faithfulness",
    "multimodal_relevance",
    "rating_answer_accuracy",
    "rating_answer_accuracy_swapped",
    "rating_answer_completeness",
    "rating_context_relevance",
    "rating_context_relevance_alt",
    "rating_groundedness",
    "rating_groundedness_alt",
    "rubric_score",
    "simple_criteria",
    "summary_answers",
    "summary_questions",
    "supported",
)


# -- reading a request -----------------------------------------------------------------------
def system_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def prompt_id(request: RecordedRequest) -> str | None:
    """The id of the metric prompt this chat request carries (None if it is none of them)."""
    system = system_text(request)
    found = [
        pid for pid in JUDGE_PROMPTS if system.startswith(load_prompt(pid).instruction.strip())
    ]
    return found[0] if len(found) == 1 else None


def fenced(request: RecordedRequest, name: str) -> str:
    """The text inside `<name>...</name>` of the request's last user message."""
    match = re.search(
        rf"<{re.escape(name)}>\n(.*?)\n</{re.escape(name)}>", request.last_user_text, re.DOTALL
    )
    if match is None:
        raise KeyError(f"the last user message has no <{name}> input")
    return match.group(1)


def schema_name(request: RecordedRequest) -> str | None:
    fmt = request.body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return request.forced_tool


def numbered(items: Sequence[str]) -> str:
    """How `ask_verdicts` lists items in the <items> input."""
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


# -- replies ----------------------------------------------------------------------------------
def claims(*items: str) -> str:
    return json.dumps({"claims": list(items)})


def entities(*names: str) -> str:
    return json.dumps({"entities": list(names)})


def verdict_lines(*labels: str) -> str:
    return "\n".join(f"{i}. {label}" for i, label in enumerate(labels, start=1))


@dataclass
class WithLogprobs(Behaviour):
    """A completion whose tokens carry the log-probabilities the test chose.

    `tokens`: (token, {alternative: probability}) in order; the token's own log-probability is
    its entry in the mapping (0.0 when it has none)."""

    text: str
    tokens: list[tuple[str, dict[str, float]]]

    def respond(self, request: RecordedRequest) -> Reply:
        payload = completion_payload(request, [self.text], (10, 5), "stop")
        content = []
        for token, alternatives in self.tokens:
            top = [
                {"token": alt, "logprob": math.log(p), "bytes": list(alt.encode())}
                for alt, p in alternatives.items()
            ]
            own = math.log(alternatives[token]) if token in alternatives else 0.0
            content.append(
                {"token": token, "logprob": own, "bytes": list(token.encode()), "top_logprobs": top}
            )
        for choice in payload["choices"]:
            choice["logprobs"] = {"content": content, "refusal": None}
        return Reply(200, payload)


def verdicts_with_probabilities(*p_yes: float) -> WithLogprobs:
    """Verdict lines ("1. yes") whose verdict tokens carry P(yes) = p (0 < p < 1)."""
    lines, tokens = [], []
    for index, p in enumerate(p_yes, start=1):
        assert 0 < p < 1
        label = "yes" if p >= 0.5 else "no"
        lines.append(f"{index}. {label}")
        tokens += [
            (str(index), {}),
            (".", {}),
            (f" {label}", {" yes": p, " no": 1 - p}),
            ("\n", {}),
        ]
    return WithLogprobs("\n".join(lines), tokens)


def rating_with_probabilities(label: str, distribution: Mapping[str, float]) -> WithLogprobs:
    """One rating token `label`, with the judge's probability for each grade."""
    return WithLogprobs(label, [(label, dict(distribution))])


Answer = str | Behaviour | Callable[[RecordedRequest], "str | Behaviour"]


def by_input(name: str, table: Mapping[str, Answer]) -> Callable[[RecordedRequest], Answer]:
    """Pick the answer by the exact text inside the request's `<name>` input."""

    def choose(request: RecordedRequest) -> Answer:
        value = fenced(request, name)
        if value not in table:
            raise KeyError(f"no answer scripted for <{name}> {value!r}")
        return table[value]

    return choose


class Judge(Behaviour):
    """Answers each chat request by its prompt id, from the answers the test scripted."""

    def __init__(self, answers: Mapping[str, Answer]) -> None:
        unknown = set(answers) - set(JUDGE_PROMPTS)
        assert not unknown, f"not a metric prompt: {unknown}"
        self.answers = dict(answers)
        self.unexpected: list[str] = []
        self._lock = threading.Lock()

    def respond(self, request: RecordedRequest) -> Reply:
        try:
            pid = prompt_id(request)
            if pid not in self.answers:
                raise KeyError(f"no answer scripted for prompt {pid!r}")
            answer: Any = self.answers[pid]
            while callable(answer) and not isinstance(answer, Behaviour):
                answer = answer(request)
            if isinstance(answer, str):
                answer = ok(answer)
            return answer.respond(request)
        except Exception as exc:  # recorded, and the fixture fails the test
            with self._lock:
                self.unexpected.append(f"{type(exc).__name__}: {exc}")
            return _teapot(str(exc))


@dataclass
class Vectors(Behaviour):
    """The embeddings endpoint answering from a fixed table of text -> vector."""

    table: Mapping[str, list[float]]
    unexpected: list[str] = field(default_factory=list)

    def respond(self, request: RecordedRequest) -> Reply:
        inputs = request.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        missing = [text for text in texts if text not in self.table]
        if missing:
            self.unexpected.append(f"no vector scripted for {missing!r}")
            return _teapot(f"no vector for {missing!r}")
        data = [
            {"object": "embedding", "index": i, "embedding": list(self.table[t])}
            for i, t in enumerate(texts)
        ]
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.body.get("model"),
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            },
        )


def _teapot(message: str) -> Reply:
    return Reply(
        418, {"error": {"message": message, "type": "unscripted", "param": None, "code": None}}
    )


# -- the fixture's object ---------------------------------------------------------------------
class Loopback:
    """The fake server, the models built against it, and what the metric sent."""

    def __init__(self, server: FakeOpenAI) -> None:
        self.server = server
        self._judge: Judge | None = None
        self._vectors: Vectors | None = None

    def llm(self) -> LLM:
        return llm_factory(self.server.model_string("judge"), cache=False, retry=FAST_RETRY)

    def embeddings(self) -> Embeddings:
        return embedding_factory(f"vllm/emb@{self.server.url}", cache=False, retry=FAST_RETRY)

    def judge(self, answers: Mapping[str, Answer]) -> Judge:
        self._judge = Judge(answers)
        self.server.default = self._judge
        return self._judge

    def vectors(self, table: Mapping[str, list[float]]) -> Vectors:
        self._vectors = Vectors(table)
        self.server.embedding_default = self._vectors
        return self._vectors

    # -- what was sent --
    @property
    def chat(self) -> list[RecordedRequest]:
        return self.server.chat_requests

    @property
    def embedding_batches(self) -> list[list[str]]:
        return [list(r.body["input"]) for r in self.server.embedding_requests]

    def prompts_sent(self) -> list[str | None]:
        """Prompt ids of the chat requests, in arrival order."""
        return [prompt_id(r) for r in self.chat]

    def prompt_counts(self) -> dict[str | None, int]:
        return dict(collections.Counter(self.prompts_sent()))

    def sent(self, pid: str) -> list[RecordedRequest]:
        return [r for r in self.chat if prompt_id(r) == pid]

    def unexpected(self) -> list[str]:
        return [
            *(self._judge.unexpected if self._judge else []),
            *(self._vectors.unexpected if self._vectors else []),
        ]

    # -- running a metric --
    def run(self, metric: Metric, row: Mapping[str, Any]) -> tuple[Outcome, Usage]:
        """Score one row through `evaluate` (the engine's path): its outcome and metered usage."""
        result = evaluate([dict(row)], [metric], show_progress=False)
        return result.outcome(0, metric.name), result.usage(metric.name)


def check_calls(
    loop: Loopback,
    usage: Usage,
    metric: Metric,
    row: Mapping[str, Any],
    *,
    chat: int,
    embeddings: int = 0,
) -> None:
    """The metric sent `chat` chat and `embeddings` embedding requests; the engine metered the
    same number, and the metric's own `estimate()` predicted the chat requests."""
    assert len(loop.chat) == chat, loop.prompts_sent()
    assert len(loop.embedding_batches) == embeddings
    assert usage.requests == chat + embeddings
    assert usage.cached_requests == 0
    assert metric.estimate(SingleTurnSample(**row)).requests == chat


def loopback() -> Iterator[Loopback]:
    """Generator body of a `loop` fixture; fails the test if anything went unscripted."""
    servers = serve()
    loop = Loopback(next(servers))
    try:
        yield loop
        assert loop.unexpected() == [], "requests the test did not script"
    finally:
        servers.close()


__all__ = [
    "FAST_RETRY",
    "JUDGE_PROMPTS",
    "Judge",
    "Loopback",
    "Vectors",
    "WithLogprobs",
    "by_input",
    "check_calls",
    "claims",
    "entities",
    "fenced",
    "loopback",
    "numbered",
    "prompt_id",
    "rating_with_probabilities",
    "schema_name",
    "system_text",
    "verdict_lines",
    "verdicts_with_probabilities",
]
