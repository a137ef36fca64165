"""No `Unclosed client session` / `Unclosed connector` / unclosed-socket ResourceWarning after a
model is used from the caller's own loops (`asyncio.run(aevaluate(...))`, a second `asyncio.run`),
and a caller's `AsyncOpenAI` keeps working on the second loop.

Each scenario runs in a fresh interpreter with `-X dev -W error::ResourceWarning` and asyncio's
debug mode, against the fake OpenAI server on 127.0.0.1, and ends with the model dropped and
`gc.collect()`: an HTTP session left open on an ended loop reports itself then (on stderr, as
"Exception ignored ... ResourceWarning"), and the test fails on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.models.fake_openai import dynamic, embed, ok
from tests.models.judge import verdict

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import asyncio, gc, sys
import openai
from assay import aevaluate
from assay.models import embedding_factory, llm_factory
from tests.models.judge import JudgeMetric, rows

URL = sys.argv[1]


def answered(result):
    return result.summary("judge").n_ok
"""

SCENARIOS = {
    # assay's own aiohttp session (a model string), one per loop
    "model_string_two_runs": """
        llm = llm_factory(f"vllm/test-model@{URL}", cache=False)
        for _ in range(2):
            result = asyncio.run(aevaluate(rows(3), [JudgeMetric()], llm=llm, show_progress=False))
            print("rows", answered(result))
        """,
    # the docs' `llm_factory("gpt-4o", client=AsyncOpenAI(...))`, used in one asyncio.run and then
    # in another (top-level-await style code run as a script)
    "callers_async_client_two_loops": """
        client = openai.AsyncOpenAI(base_url=URL, api_key="k")
        llm = llm_factory("gpt-4o", client=client, cache=False)
        result = asyncio.run(aevaluate(rows(3), [JudgeMetric()], llm=llm, show_progress=False))
        print("rows", answered(result))

        async def ask():
            return (await llm.agenerate("hello")).text

        print("text", asyncio.run(ask()))
        result = asyncio.run(aevaluate(rows(2), [JudgeMetric()], llm=llm, show_progress=False))
        print("rows", answered(result))
        del client
        """,
    "callers_async_client_embeddings_two_loops": """
        embedder = embedding_factory(
            "openai", model="text-embedding-3-small",
            client=openai.AsyncOpenAI(base_url=URL, api_key="k"), cache=False,
        )
        for text in ("first loop", "second loop"):
            vector = asyncio.run(embedder.aembed_text(text))
            print("dims", len(vector))
        llm = embedder
        """,
}

EXPECTED = {
    "model_string_two_runs": ["rows 3", "rows 3"],
    "callers_async_client_two_loops": ["rows 3", 'text {"score": 0.5, "reason": "ok"}', "rows 2"],
    "callers_async_client_embeddings_two_loops": ["dims 3", "dims 3"],
}

EPILOGUE = """
del llm
gc.collect()
print("collected")
"""


def run_scenario(tmp_path: Path, url: str, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "scenario.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + EPILOGUE, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "PYTHONASYNCIODEBUG": "1",
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "k",
    }
    return subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", str(script), url],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(150)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_no_unclosed_http_resources_after_the_callers_loops_end(server, tmp_path, scenario):
    server.default = dynamic(lambda request: ok(verdict(0.5, "ok")))
    server.embedding_default = embed()
    done = run_scenario(tmp_path, server.url, SCENARIOS[scenario])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [*EXPECTED[scenario], "collected"], done.stderr
    # asyncio's debug mode also reports slow callbacks ("Executing <Task ...> took 0.3 seconds")
    # on a loaded machine; those lines name this test's tmp directory, which contains "unclosed".
    stderr = "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("Executing <")
    )
    for sign in ("Unclosed", "unclosed", "ResourceWarning", "Exception ignored"):
        assert sign not in stderr, done.stderr


# The caller's own `http_client`: its kept-alive connections belong to the first loop, closed when
# the second run starts, and every cell of that run failed with "Event loop is closed" (as with the
# bare SDK). Those connections are the caller's and stay open on the dead loop (asyncio warns about
# them when they are collected), so this scenario checks the answers, not the warnings.
CALLERS_HTTP_CLIENT = """
import httpx
client = openai.AsyncOpenAI(base_url=URL, api_key="k", http_client=httpx.AsyncClient())
llm = llm_factory("gpt-4o", client=client, cache=False)
for size in (3, 2):
    result = asyncio.run(aevaluate(rows(size), [JudgeMetric()], llm=llm, show_progress=False))
    print("rows", answered(result), [error.message for _, _, error in result.errors()][:1])
"""


@pytest.mark.timeout(150)
def test_callers_http_client_serves_a_second_asyncio_run(server, tmp_path):
    server.default = dynamic(lambda request: ok(verdict(0.5, "ok")))
    script = tmp_path / "scenario.py"
    script.write_text(PRELUDE + CALLERS_HTTP_CLIENT, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "k",
    }
    done = subprocess.run(
        [sys.executable, str(script), server.url],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["rows 3 []", "rows 2 []"], done.stderr
    # both runs went over the wire (nothing cached), the second on a fresh connection pool
    assert len(server.chat_requests) == 5
