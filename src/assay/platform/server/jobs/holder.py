"""Which process holds a job's claim, and whether it is provably gone.

A claim stores its worker's process: the host (its name, the kernel's boot id and the process
namespace, so two containers or two machines never compare their pids), the pid, and the
process's start time (so a pid reused by a later process is not taken for the holder). A worker on
the same host can then tell at once that the holder was killed (`kill -9`, a crash, a power cut
and a reboot) instead of waiting for its heartbeat to go stale. Anything it cannot prove (another
host, a platform without /proc, a pid it may not look at) counts as alive: the heartbeat's
timeout decides then, as before.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

HOST_MAX = 255


@dataclass(frozen=True)
class Process:
    host: str
    pid: int
    started: str | None  # None where the start time cannot be read


@functools.lru_cache(maxsize=1)
def host_key() -> str:
    """This host as the pids of its processes are meaningful: name, boot and pid namespace."""
    parts = [socket.gethostname()]
    with contextlib.suppress(OSError):
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
    with contextlib.suppress(OSError):
        parts.append(os.readlink("/proc/self/ns/pid"))
    return "|".join(parts)[:HOST_MAX]


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].decode("ascii", "replace").split()


def start_time(pid: int) -> str | None:
    """When the process started (clock ticks after boot, from /proc), or None if unknown."""
    fields = _stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def this_process() -> Process:
    pid = os.getpid()
    return Process(host_key(), pid, start_time(pid))


def gone(holder: Process, here: Process | None = None) -> bool:
    """True only when `holder` provably no longer runs: it is on this host and its pid is free,
    a zombie, or now a different process (another start time)."""
    here = here or this_process()
    if holder.host != here.host or holder.pid <= 0 or sys.platform == "win32":
        return False
    if holder.pid == here.pid:
        return holder.started is not None and here.started not in (None, holder.started)
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's: look at its start time below
        pass
    except OSError:
        return False
    fields = _stat(holder.pid)
    if fields is None:
        return False  # no /proc here: cannot tell a reused pid from the holder
    if fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent
        return True
    return holder.started is not None and len(fields) > 19 and fields[19] != holder.started


__all__ = ["Process", "gone", "host_key", "start_time", "this_process"]
