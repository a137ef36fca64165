"""The response cache in PostgreSQL (a real server, started as the platform tests start theirs):
the SQLite cache's semantics, and a cluster's shared cache answering the calls a killed worker
had already made."""

from __future__ import annotations

import collections
import json
import re
import threading
import time

import pytest

from assay import evaluate
from assay._util.sync import run_sync
from assay.engine.ray.executor import RayExecutor
from assay.errors import UsageError
from assay.metrics.general.aspect_critic import AspectCritic
from assay.models import ResponseCache, RetryPolicy, llm_factory
from assay.models.cache import CacheMiss, open_cache
from assay.models.cache_postgres import PostgresResponseCache
from tests.engine.ray.conftest import FAST_RETRY, kill_9, rows_written, wait_until, worker_pids
from tests.models.fake_openai import dynamic, error, ok
from tests.platform.conftest import pg_url  # noqa: F401  (the real PostgreSQL, package-scoped)

pytestmark = pytest.mark.ray


@pytest.fixture
def cache_url(pg_url: str) -> str:  # noqa: F811
    PostgresResponseCache(pg_url).clear()  # each test starts from an empty cache
    return pg_url


def ask(llm, prompt: str):
    return run_sync(llm.agenerate(prompt))  # closes the loop's HTTP clients


def test_a_url_or_assay_cache_url_selects_postgresql(cache_url, monkeypatch, tmp_path):
    assert isinstance(open_cache(cache_url), PostgresResponseCache)
    assert type(open_cache(tmp_path / "c.sqlite")) is ResponseCache
    monkeypatch.setenv("ASSAY_CACHE_URL", cache_url)
    assert isinstance(open_cache(), PostgresResponseCache)  # what llm_factory(cache=True) opens


def test_answers_are_shared_and_errors_never_stored(cache_url, server):
    server.script(error(400, "refused"), ok("an answer"))
    once = RetryPolicy(max_attempts=1)
    first = llm_factory(server.model_string(), cache=cache_url, retry=once)
    with pytest.raises(Exception, match="refused"):
        ask(first, "hello")
    assert ask(first, "hello").text == "an answer"  # the error was not cached: asked again
    assert server.count == 2
    # Another LLM on its own connection, as another process or node would be.
    second = llm_factory(server.model_string(), cache=cache_url, retry=once)
    again = ask(second, "hello")
    assert again.text == "an answer" and again.cached and server.count == 2
    stats = open_cache(cache_url).stats()
    assert stats["entries"] == 1 and stats["by_model"][0]["model"] == "test-model"
    assert open_cache(cache_url).clear() == 1 and open_cache(cache_url).stats()["entries"] == 0


def test_a_cut_off_answer_is_stored_with_its_finish_reason(cache_url, server):
    import psycopg

    server.script(ok("the answer was cu", finish_reason="length"), ok("the whole answer"))
    first = ask(llm_factory(server.model_string(), cache=cache_url), "tell me everything")
    assert first.text == "the whole answer" and server.count == 2  # asked again, bigger budget
    # Both answers are kept, the cut one marked as such; a fresh LLM asks nothing.
    again = ask(llm_factory(server.model_string(), cache=cache_url), "tell me everything")
    assert again.cached and again.text == "the whole answer" and server.count == 2
    with psycopg.connect(cache_url.replace("+psycopg", "")) as db:
        stored = [
            json.loads(value)["generations"][0]
            for (value,) in db.execute("SELECT value FROM assay_response_cache WHERE kind = 'chat'")
        ]
    assert sorted((g["text"], g["finish_reason"]) for g in stored) == [
        ("the answer was cu", "length"),
        ("the whole answer", "stop"),
    ]


def test_replay_only_never_calls_and_names_the_cache_without_its_password(cache_url, server):
    server.default = ok("never")
    with_password = cache_url.replace("postgres@", "postgres:hunter2@")  # trust auth ignores it
    judge = llm_factory(
        server.model_string(),
        cache=open_cache(with_password, replay_only=True),
        retry=FAST_RETRY,
    )
    with pytest.raises(CacheMiss) as caught:
        ask(judge, "not recorded")
    assert server.count == 0
    assert "replay-only cache postgresql+psycopg://postgres:***@" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_no_server_at_the_url_is_one_clear_error():
    with pytest.raises(UsageError, match=r"response cache postgresql://u:\*\*\*@127\.0\.0\.1:9/x"):
        open_cache("postgresql://u:pw@127.0.0.1:9/x")


N_ROWS = 48


def row_of(request) -> int:
    return int(re.search(r"answer (\d+)", request.last_user_text).group(1))


ROWS = [{"user_input": f"question {n}", "response": f"answer {n}"} for n in range(N_ROWS)]


def test_after_a_killed_worker_its_finished_calls_come_from_the_shared_cache(
    ray_cluster, cache_url, server, tmp_path
):
    """Each row has a fast and a slow judge call; a row is written once both are done, so a
    killed worker leaves rows whose fast call was made (and stored) but never written."""

    def choose(request):
        text = request.last_user_text
        return ok(
            "yes" if "7" in text else "no", latency=0.6 if "slowly" in str(request.body) else 0
        )

    server.default = dynamic(choose)
    judge = llm_factory(server.model_string(), cache=cache_url, retry=FAST_RETRY)
    fast = AspectCritic(name="fast", definition="the response has a seven")
    slow = AspectCritic(name="slow", definition="think slowly: the response has a seven")
    out = tmp_path / "out"
    executor = RayExecutor(output=out, num_workers=2, max_in_flight=8, block_rows=4)
    finished: dict[str, object] = {}

    def run() -> None:
        try:
            finished["result"] = evaluate(
                ROWS, [fast, slow], llm=judge, executor=executor, show_progress=False
            )
        except BaseException as exc:
            finished["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: rows_written(out) >= 8 or not thread.is_alive(), timeout=90, what="8 rows")
    assert thread.is_alive(), f"the run ended before a worker could be killed: {finished}"
    killed_at = time.monotonic()  # the fake server's clock
    kill_9(min(worker_pids(out)))
    thread.join(timeout=120)
    assert not thread.is_alive() and "error" not in finished, finished.get("error")

    result = finished["result"]
    expected = [1 if "7" in row["response"] else 0 for row in ROWS]
    assert [row["fast"].value for row in result.outcomes] == expected
    assert [row["slow"].value for row in result.outcomes] == expected
    stats = executor.last_run
    assert stats.workers_lost >= 1 and stats.rows_reassigned >= 1
    # The fast calls the dead worker had finished were answered from PostgreSQL, not asked
    # again; only those still in flight when it died could be (at most its max_in_flight).
    fast_asked = [r for r in server.chat_requests if "slowly" not in str(r.body)]
    asked = collections.Counter(row_of(r) for r in fast_asked)
    settled = {row_of(r) for r in fast_asked if r.done is not None and r.done < killed_at - 0.2}
    assert not {row for row, n in asked.items() if n > 1} & settled
    assert set(asked) == set(range(N_ROWS)) and len(fast_asked) - N_ROWS <= 8
    # Reported: each re-assigned row has two cells, some answered by the shared cache.
    assert 1 <= stats.reassigned_cached_requests <= 2 * stats.rows_reassigned


def test_assay_cache_stats_and_clear_use_assay_cache_url(cache_url, monkeypatch):
    from typer.testing import CliRunner

    from assay.cli.app import app

    open_cache(cache_url).put_meta("probe", "1")
    open_cache(cache_url).put_vector("v1", "embedder", [0.5, 0.25])
    monkeypatch.setenv("ASSAY_CACHE_URL", cache_url)
    shown = CliRunner().invoke(app, ["cache", "stats"])
    assert shown.exit_code == 0, shown.output
    assert "cache: postgresql+psycopg://postgres@127.0.0.1:" in shown.output
    assert "entries: 1" in shown.output and "embedding embedder: 1 entries" in shown.output
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed 2 cached entries" in cleared.output
