"""A run over two Ray nodes on one host (`ray start --head` + `ray start --address`): each node
gets a worker, and the rows are the same as anywhere else. Slow (two nodes start in 10-20 s)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.ray.conftest import wait_until

pytestmark = [pytest.mark.ray, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
RAY = str(Path(sys.executable).with_name("ray"))
# Loopback only, for this test's own two nodes: no token to hand from the head to the other node.
ENV = {
    **os.environ,
    "RAY_AUTH_MODE": "disabled",
    "PYTHONPATH": str(ROOT),
    # both nodes (and the driver) on loopback, as assay's own local clusters (issue #45, 11)
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}

DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import ray
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor
    from assay.metrics.general.aspect_critic import AspectCritic
    from assay.models import RetryPolicy, llm_factory

    model, address, out = sys.argv[1:4]
    ray.init(address=address, log_to_driver=False)
    deadline = time.monotonic() + 60
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        assert time.monotonic() < deadline, "the second node never joined"
        time.sleep(0.1)
    judge = llm_factory(model, cache=False, retry=RetryPolicy(max_attempts=8, initial_wait=0.01, max_wait=0.2))
    rows = [{"user_input": f"q{n}", "response": f"answer {n}"} for n in range(60)]
    executor = RayExecutor(address=address, num_workers=2, worker_cpus=1, block_rows=4, output=out)
    result = evaluate(rows, [AspectCritic(name="has_seven", definition="a seven")], llm=judge,
                      executor=executor, show_progress=False)
    print(json.dumps({
        "values": [row["has_seven"].value for row in result.outcomes],
        "nodes": executor.last_run.nodes,
        "cluster_nodes": [n["NodeID"] for n in ray.nodes() if n["Alive"]],
        "node_addresses": sorted({n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}),
    }))
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def two_nodes() -> Iterator[str]:
    port = free_port()
    temp = tempfile.mkdtemp(prefix="assay-2n-", dir="/tmp")  # short: Ray's socket paths are limited
    common = ["--block", "--num-cpus=1", "--disable-usage-stats", "--node-ip-address=127.0.0.1"]
    # --block: the `ray start` process owns its node, and stopping it stops that node (only it).
    head = subprocess.Popen(
        [
            RAY,
            "start",
            "--head",
            f"--port={port}",
            "--include-dashboard=false",
            f"--temp-dir={temp}",
            *common,
        ],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    other = None
    try:

        def answers() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            except OSError:
                return False
            return True

        wait_until(answers, timeout=60, what="the head node")
        other = subprocess.Popen(
            [RAY, "start", f"--address=127.0.0.1:{port}", *common],
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        yield f"127.0.0.1:{port}"
    finally:
        for process in (other, head):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()


def test_a_run_over_two_nodes_uses_both(two_nodes, judged, server, tmp_path):
    judged()
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    done = subprocess.run(
        [sys.executable, str(script), server.model_string(), two_nodes, str(tmp_path / "out")],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["values"] == [1 if "7" in f"answer {n}" else 0 for n in range(60)]
    assert len(set(report["cluster_nodes"])) == 2
    assert sorted(report["nodes"]) == sorted(report["cluster_nodes"])  # a worker on each node
    assert report["node_addresses"] == ["127.0.0.1"]  # both nodes on loopback only
