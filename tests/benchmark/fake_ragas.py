"""A stand-in for a Ragas virtualenv, so the side-by-side runner can be tested where Ragas is not
installed (Ragas itself is not what these tests check; our runner, worker and records are).

`make_fake_ragas(tmp_path)` writes a package named `ragas` with the few names the worker uses and an
executable `python` that runs the worker with that package importable. The fake metrics make real
HTTP requests through the `AsyncOpenAI` client the worker builds, so request and token counting,
errors and the embeddings endpoint are exercised for real:

- `Faithfulness.ascore` asks the judge twice; the second reply plus the `offset` option is the
  score ("nan" gives a NaN, an HTTP error raises);
- `ContextPrecision` needs a `reference`, which some suites' rows lack;
- `AnswerRelevancy.ascore` embeds the question and the response and returns their cosine.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from tests.benchmark.loopback_judge import answer
from tests.models.fake_openai import Behaviour, FakeOpenAI, RecordedRequest, dynamic, error, ok

PACKAGE = {
    # Libraries print to stdout; the runner must read past lines that are not the worker's.
    "ragas/__init__.py": '__version__ = "0.0-fake"\nprint("a chatty library says hello")\n',
    "ragas/llms.py": """
class _LLM:
    def __init__(self, model, client):
        self.model, self.client = model, client

def llm_factory(model, client=None, **kwargs):
    return _LLM(model, client)
""",
    "ragas/embeddings/__init__.py": "",
    "ragas/embeddings/base.py": """
class _Embeddings:
    def __init__(self, model, client):
        self.model, self.client = model, client

def embedding_factory(provider="openai", model=None, client=None, **kwargs):
    return _Embeddings(model, client)
""",
    "ragas/metrics/__init__.py": "",
    "ragas/metrics/collections.py": """
import math

class _Result:
    def __init__(self, value):
        self.value = value

class Faithfulness:
    def __init__(self, llm, name="faithfulness", offset=0.0):
        self.llm, self.offset = llm, offset

    async def ascore(self, user_input, response, retrieved_contexts):
        chat = self.llm.client.chat.completions
        await chat.create(model=self.llm.model, messages=[{"role": "user", "content": "split: " + response}])
        reply = await chat.create(model=self.llm.model, messages=[{"role": "user", "content": "judge: " + response}])
        return _Result(float(reply.choices[0].message.content) + self.offset)

class ContextPrecision:
    def __init__(self, llm):
        self.llm = llm

    async def ascore(self, user_input, reference, retrieved_contexts):
        return _Result(1.0)

class AnswerRelevancy:
    def __init__(self, llm, embeddings, name="answer_relevancy", strictness=3, **kwargs):
        self.llm, self.embeddings = llm, embeddings

    async def ascore(self, user_input, response):
        done = await self.embeddings.client.embeddings.create(model=self.embeddings.model,
                                                              input=[user_input, response])
        a, b = (item.embedding for item in done.data)
        dot = sum(x * y for x, y in zip(a, b))
        return _Result(dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))))
""",
}

LAUNCHER = """
import runpy, sys
sys.path.insert(0, {package!r})
args = [a for a in sys.argv[1:] if a != "-I"]
sys.argv = args
runpy.run_path(args[0], run_name="__main__")
"""


def make_fake_ragas(folder: Path) -> Path:
    """Write the fake package and its interpreter under `folder`; return the interpreter's path."""
    package = folder / "fake_ragas_site"
    for name, text in PACKAGE.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    launcher = folder / "launch.py"
    launcher.write_text(LAUNCHER.format(package=str(package)))
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{launcher}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return python


class ScoreJudge(FakeOpenAI):
    """Answers "split: ..." with "ok" and "judge: <response>" with `scores[response]` (default
    "0.5"); a response listed in `fail` gets an HTTP 400 on its judge request. Anything else is
    answered as `LoopbackJudge` answers assay's faithfulness prompts. `delay`: seconds every
    request waits before its answer."""

    def __init__(self, scores: dict[str, str] | None = None, fail: set[str] | None = None) -> None:
        super().__init__()
        self.scores = scores or {}
        self.fail = fail or set()
        self.delay = 0.0
        self.default = dynamic(self._reply)

    @property
    def keys(self) -> set[str]:
        """The Authorization headers seen."""
        return {request.headers.get("authorization", "") for request in self.chat_requests}

    def _reply(self, request: RecordedRequest) -> Behaviour:
        content = str(request.messages[-1]["content"])
        kind, _, response = content.partition(": ")
        if kind == "judge" and response in self.fail:
            return error(400, "scripted failure")
        if kind == "judge":
            text = self.scores.get(response, "0.5")
        elif kind == "split":
            text = "ok"
        else:  # assay's own faithfulness prompts, so both engines can share this judge
            text = answer(request.messages)
            if text is None:
                return error(400, "unknown prompt")
        return ok(text, usage=(10, 3), latency=self.delay)
