"""Mistakes are one clear error within seconds, never a hang: an address with no cluster, workers
that cannot import assay, more CPUs than the cluster has, options the Ray executor lacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay import Metric, MetricResult, evaluate
from assay.engine.ray.cluster import check_workers_import
from assay.engine.ray.executor import RayExecutor
from assay.errors import UsageError

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[3]
ROWS = [{"response": "a", "reference": "a"}, {"response": "b", "reference": "c"}]


def assay_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # A bounded wait: a hang fails the test instead of blocking the run.
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_address_with_no_cluster_is_one_line_error(address, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    done = assay_cli(
        "evaluate",
        str(data),
        "-m",
        "exact_match",
        "--ray",
        address,
        "--output",
        str(tmp_path / "o"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no Ray cluster answers at {address}" in lines[0], done.stderr


def test_auto_naming_a_dead_cluster_says_which_address_it_tried(tmp_path, monkeypatch):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # as a stale address would
    done = assay_cli(
        "evaluate",
        str(data),
        "-m",
        "exact_match",
        "--ray",
        "auto",
        "--output",
        str(tmp_path / "o"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "no Ray cluster answers at auto (from 127.0.0.1:1)" in done.stderr, done.stderr


def test_more_cpus_than_the_cluster_has_is_refused(ray_cluster, tmp_path):
    executor = RayExecutor(num_workers=40, worker_cpus=1, output=tmp_path / "out")
    with pytest.raises(
        UsageError,
        match=r"40 Ray workers x 1 CPU need 40 CPUs, but the cluster has [\d.]+ of 4 free",
    ):
        evaluate(ROWS, ["exact_match"], executor=executor, show_progress=False)


def test_workers_that_cannot_import_assay_are_named(ray_cluster):
    with pytest.raises(
        UsageError, match=r"the Ray workers cannot import assay_absent_here \(ModuleNotFoundError"
    ):
        check_workers_import(ray_cluster, timeout=30, module="assay_absent_here")
    check_workers_import(ray_cluster, timeout=30)  # the real one is importable, same version


@dataclass(kw_only=True)
class HoldsAGenerator(Metric):
    name: str = "holds_a_generator"
    required_fields = ("response",)
    state: Any = field(default_factory=lambda: (n for n in range(3)))  # cannot be pickled

    async def _ascore(self, *, response: str) -> MetricResult:
        return MetricResult(1.0)


def test_a_metric_that_cannot_travel_is_named(tmp_path):
    with pytest.raises(
        UsageError, match=r"metric 'holds_a_generator' cannot be sent to Ray workers .*generator"
    ):
        evaluate(
            ROWS,
            [HoldsAGenerator()],
            executor=RayExecutor(output=tmp_path / "o"),
            show_progress=False,
        )


def _refuse_to_load(driver_pid: int) -> Metric:
    if os.getpid() != driver_pid:
        raise RuntimeError("this metric loads only in the driver\n(second line of the cause)")
    return FailsOnTheWorker()


@dataclass(kw_only=True)
class FailsOnTheWorker(Metric):
    name: str = "fails_on_the_worker"
    required_fields = ("response",)

    async def _ascore(self, *, response: str) -> MetricResult:
        return MetricResult(1.0)

    def __reduce__(self) -> Any:
        return _refuse_to_load, (os.getpid(),)


def test_metrics_a_worker_cannot_load_are_one_line_error(ray_cluster, tmp_path):
    with pytest.raises(UsageError) as caught:
        evaluate(
            ROWS,
            [FailsOnTheWorker()],
            executor=RayExecutor(output=tmp_path / "o", num_workers=1, start_timeout=60),
            show_progress=False,
        )
    message = str(caught.value)
    assert message.startswith("the Ray workers could not start: RuntimeError: ")
    assert message.endswith("(second line of the cause)") and "\n" not in message


def test_a_failed_actor_start_keeps_only_the_last_line_of_its_cause():
    from assay.engine.ray.cluster import actor_start_error

    class Wrapped(Exception):
        cause = ValueError("Traceback (most recent call last):\n  ...\nValueError: no model")

    assert str(actor_start_error(Wrapped("outer"), "a local judge could not start")) == (
        "a local judge could not start: ValueError: ValueError: no model"
    )
    assert str(actor_start_error(KeyError(), "x")) == "x: KeyError: "


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"run_dir": "somewhere"}, "does not support run_dir"),
        ({"budget": 1.0}, "does not support budget"),
        ({"raise_exceptions": True}, "does not support strict"),
    ],
)
def test_options_the_ray_executor_lacks_are_refused(options, message, tmp_path):
    with pytest.raises(UsageError, match=message):
        evaluate(
            ROWS,
            ["exact_match"],
            executor=RayExecutor(output=tmp_path / "o"),
            show_progress=False,
            **options,
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_workers": 0}, "num_workers must be a whole number >= 1, got 0"),
        ({"worker_cpus": -1}, "worker_cpus must be a number > 0, got -1"),
        ({"address": ""}, "address must be"),
    ],
)
def test_bad_settings_name_the_field(options, message):
    with pytest.raises(UsageError, match=message):
        RayExecutor(**options)
