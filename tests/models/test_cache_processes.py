"""Several processes opening one new response cache at once (pytest-xdist workers, `assay
benchmark` runs side by side) all get a working cache: switching the new file to WAL is retried
while another process holds it, instead of failing with "database is locked"."""

from __future__ import annotations

import multiprocessing

from assay.models.cache import ResponseCache


def _open(paths: list[str], barrier, results) -> None:
    for path in paths:  # every process opens the same new file at the same moment
        try:
            barrier.wait(timeout=60)
            cache = ResponseCache(path)
            cache._put(f"key-{multiprocessing.current_process().pid}", "chat", "m", "{}")
            results.put("ok")
        except Exception as exc:  # reported to the parent, which asserts on it
            results.put(repr(exc))


def test_processes_opening_one_new_cache_at_once_all_succeed(tmp_path):
    # Spawned, not forked: a fork of the many-threaded test process can inherit a held lock.
    context = multiprocessing.get_context("spawn")
    processes, trials = 8, 10
    paths = [str(tmp_path / f"cache-{trial}.sqlite") for trial in range(trials)]
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_open, args=(paths, barrier, results), daemon=True)
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=120) for _ in range(processes * trials)]
    finally:
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.kill()
    assert set(outcomes) == {"ok"}, [o for o in outcomes if o != "ok"][:3]
    for path in paths:
        entries = ResponseCache(path)._db.execute("SELECT count(*) FROM entries").fetchone()[0]
        assert entries == processes
