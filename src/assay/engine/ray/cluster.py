"""Connecting to Ray, and the checks that turn a would-be hang into a one-line error.

- `address="local"` starts a private cluster for this process (never a stale one); "auto" joins
  the cluster `ray start` runs on this machine (or `RAY_ADDRESS`); "host:port" or "ray://host:port"
  joins that one. Before joining, the address is tried with a plain TCP connection (2 s): Ray
  itself would wait a minute or more for a cluster that is not there, or for the dead one a stale
  address file names.
- The workers must import the same assay version as the driver (checked with a tiny task).
- The workers must fit in the CPUs the cluster has free: an actor that cannot be placed waits
  forever, silently.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from assay._util.deps import require
from assay._version import __version__
from assay.errors import UsageError

logger = logging.getLogger(__name__)

PROBE_SECONDS = 2.0


# Ray decides when it is imported whether a node may announce a network address; with this
# setting "0" it keeps a cluster it starts on 127.0.0.1 (on Linux, 127.0.0.1 given as the node
# address is otherwise replaced by the machine's network address).
SINGLE_MACHINE_SETTING = ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


def import_ray(*, local: bool = False) -> Any:
    """Ray, imported for a cluster this process starts (`local`) or joins."""
    if local and "ray" not in sys.modules:
        os.environ.setdefault(*SINGLE_MACHINE_SETTING)
    return require("ray", extra="ray", feature="RayExecutor (evaluation on a Ray cluster)")


# A cluster assay starts on this machine advertises its node on loopback: by default Ray
# announces the machine's network address, opening its ports to the network for a cluster
# nobody else should join.
LOOPBACK_NODE = "127.0.0.1"


def start_local(ray: Any, *, num_cpus: int, **options: Any) -> None:
    """`ray.init` of a new single-machine cluster whose node is on 127.0.0.1, no dashboard.
    Ray must have been imported through `import_ray(local=True)` (or with the setting above in
    the environment) for the node to stay on loopback; otherwise a warning says where it is."""
    options.setdefault("include_dashboard", False)
    ray.init(address="local", num_cpus=num_cpus, _node_ip_address=LOOPBACK_NODE, **options)
    exposed = {node["NodeManagerAddress"] for node in ray.nodes()} - {LOOPBACK_NODE}
    if exposed:
        logger.warning(
            "the local Ray cluster announces %s, not 127.0.0.1: Ray was imported before assay "
            "could keep it on loopback; set %s=%s before importing ray",
            ", ".join(sorted(exposed)),
            *SINGLE_MACHINE_SETTING,
        )


def connect(
    address: str, *, cpus_needed: float, runtime_env: dict[str, Any] | None
) -> tuple[Any, bool]:
    """Ray, initialised for `address`; True when this call started the cluster (and owns it)."""
    ray = import_ray(local=address == "local")
    if ray.is_initialized():  # one Ray connection per process: use the one already made
        return ray, False
    # Ray's own info lines would bury assay's output; its errors still show.
    options: dict[str, Any] = {
        "log_to_driver": False,
        "runtime_env": runtime_env,
        "logging_level": logging.ERROR,
    }
    if address == "local":
        cpus = max(os.cpu_count() or 1, math.ceil(cpus_needed))
        start_local(ray, num_cpus=cpus, **options)
        return ray, True
    target = _resolve(address)
    _probe_tcp(address, target)
    if target.startswith("ray://"):
        try:
            import grpc  # noqa: F401  (the Ray Client needs grpcio: ray[client])
        except ImportError:
            raise UsageError(
                f"address {address!r} uses the Ray Client, which needs grpcio: "
                "pip install 'ray[client]'"
            ) from None
    try:
        ray.init(address=target, **options)
    except (Exception, SystemExit) as exc:  # Ray exits the process when the GCS never answers
        raise UsageError(f"cannot join the Ray cluster at {address}: {exc}") from None
    return ray, False


def _resolve(address: str) -> str:
    if address != "auto":
        return address
    found: str | None = None
    try:
        from ray._private.services import get_ray_address_from_environment

        found = get_ray_address_from_environment("auto", None)
    except (ImportError, ConnectionError):
        found = None
    if not found or found == "auto":
        raise UsageError(
            "address='auto': no Ray cluster is running on this machine (no RAY_ADDRESS, no "
            "`ray start`); start one with `ray start --head`, or use address='local'"
        )
    return found


def _probe_tcp(address: str, target: str) -> None:
    parts = urlsplit(target if "://" in target else f"tcp://{target}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise UsageError(
            f"Ray address {address!r} is not 'local', 'auto', 'host:port' or 'ray://host:port'"
        )
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        named = f" (from {target})" if target != address else ""
        raise UsageError(
            f"no Ray cluster answers at {address}{named}: {exc.strerror or exc}; start one with "
            "`ray start --head`, or check the address"
        ) from None


def check_capacity(ray: Any, *, workers: int, worker_cpus: float) -> None:
    """Refuse a run whose workers cannot all be placed (they would wait forever)."""
    needed = workers * worker_cpus
    free = float(ray.available_resources().get("CPU", 0.0))
    total = float(ray.cluster_resources().get("CPU", 0.0))
    if needed > free + 1e-9:
        raise UsageError(
            f"{workers} Ray workers x {worker_cpus:g} CPU need {needed:g} CPUs, but the cluster has "
            f"{free:g} of {total:g} free; lower num_workers or worker_cpus, or add nodes"
        )
    largest = max(
        (
            float(node.get("Resources", {}).get("CPU", 0.0))
            for node in ray.nodes()
            if node.get("Alive")
        ),
        default=0.0,
    )
    if worker_cpus > largest + 1e-9:
        raise UsageError(
            f"worker_cpus={worker_cpus:g}, but no node of the cluster has more than {largest:g} CPUs"
        )


def actor_start_error(exc: BaseException, what: str) -> UsageError:
    """An actor that failed while starting (`RayActorError` / `RayTaskError` from its first call),
    as one line: `what`, then the cause's type and the last line of its message (the rest is Ray's
    traceback of the remote process)."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip()
    last = text.splitlines()[-1] if text else ""
    return UsageError(f"{what}: {type(cause).__name__}: {last}")


def wait_for_start(
    ray: Any, refs: list[Any], timeout: float, *, timed_out: Callable[[], str], failed: str
) -> list[Any]:
    """`ray.get(refs)` for actors that are starting: past `timeout` a `UsageError` with the text
    `timed_out()` gives (made then, so it can report the cluster's state at that moment), and an
    actor that failed to start is `actor_start_error(exc, failed)`."""
    try:
        started: list[Any] = ray.get(refs, timeout=timeout)
        return started
    except ray.exceptions.GetTimeoutError:
        raise UsageError(timed_out()) from None
    except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as exc:
        raise actor_start_error(exc, failed) from None


def check_workers_import(ray: Any, *, timeout: float, module: str = "assay") -> None:
    """One small task on the cluster imports `module` and answers its version."""

    def probe(name: str) -> tuple[str | None, str | None]:
        # Defined here so it is pickled by value: it must run where assay may be missing.
        import importlib

        try:
            found = importlib.import_module(name)
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"
        return getattr(found, "__version__", "?"), None

    task = ray.remote(num_cpus=0, max_retries=0)(probe)
    try:
        version, problem = ray.get(task.remote(module), timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        raise UsageError(
            f"the Ray cluster ran no task within {timeout:g} s (is it overloaded, or are its "
            "workers failing to start?)"
        ) from None
    if problem is not None:
        raise UsageError(
            f"the Ray workers cannot import {module} ({problem}); install the same assay on every "
            "node (pip install 'assay[ray]'), or pass runtime_env={'pip': [...]} to RayExecutor"
        )
    if module == "assay" and version != __version__:
        raise UsageError(
            f"the Ray workers have assay {version} but this driver has {__version__}; install the "
            "same version on every node"
        )


__all__ = ["actor_start_error", "check_capacity", "check_workers_import", "connect", "import_ray"]
