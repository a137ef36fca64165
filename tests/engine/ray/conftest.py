"""One local Ray cluster for the whole session, and a judge on the loopback fake OpenAI server.

Every test here is marked `ray` and runs in the default run. The cluster is started once
(`ray.init(address="local", num_cpus=4)`); each `RayExecutor` in a test joins it, and a test that
needs a process of its own (a driver to kill, the command line) joins it by its GCS address.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.engine.ray.cluster import import_ray, start_local
from assay.models import RetryPolicy, llm_factory
from tests.models.fake_openai import FakeOpenAI, dynamic, error, ok, serve

FAST_RETRY = RetryPolicy(max_attempts=8, initial_wait=0.01, max_wait=0.2)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    ray = import_ray(local=True)
    start_local(ray, num_cpus=4, log_to_driver=False)
    try:
        # the node is advertised on loopback only (issue #45, 11)
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def gcs_address(ray_cluster: Any) -> str:
    return ray_cluster.get_runtime_context().gcs_address


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def judge_text(text: str) -> str:
    """The fake judge's deterministic verdict on a prompt: yes when the response has a 7."""
    return "yes" if "7" in text else "no"


@pytest.fixture
def judged(server: FakeOpenAI):
    """Make the fake server a deterministic yes/no judge (a 400 for responses saying 'refuse')."""

    def setup(latency: float = 0.0) -> Any:
        def choose(request):
            text = request.last_user_text
            if "refuse" in text:
                return error(400, "this request is refused")
            return ok(judge_text(text), latency=latency)

        server.default = dynamic(choose)
        return llm_factory(server.model_string(), cache=False, retry=FAST_RETRY)

    return setup


def worker_pids(output: Path) -> set[int]:
    """Process ids of the workers that wrote to an output directory (from the part file names)."""
    return {
        int(part.name.split("-")[2])
        for pattern in ("part-*.jsonl", "part-*.parquet")
        for part in (output / "rows").glob(pattern)
    }


def rows_written(output: Path) -> int:
    """Lines of JSONL parts plus Parquet rows (cells: one per row with one metric)."""
    import pyarrow.parquet as pq

    total = 0
    for part in (output / "rows").glob("part-*.jsonl"):
        total += part.read_bytes().count(b"\n")
    for part in (output / "rows").glob("part-*.parquet"):
        total += pq.read_metadata(part).num_rows  # parts are moved in whole: never torn
    return total


def wait_until(check, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_9(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
