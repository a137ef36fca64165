"""Several processes opening one new response cache at once (pytest-xdist workers, `assay
benchmark` runs side by side) all get a working cache: switching the new file to WAL is retried
while another process holds it, instead of failing with "database is locked"."""

from __future__ import annotations

import multiprocessing

from assay.models.cache import ResponseCache


def _open(path: str, barrier, results) -> None:
    barrier.wait(timeout=30)
    try:
        cache = ResponseCache(path)
        cache._put(f"key-{multiprocessing.current_process().pid}", "chat", "m", "{}")
        results.put("ok")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(repr(exc))


def test_processes_opening_one_new_cache_at_once_all_succeed(tmp_path):
    context = multiprocessing.get_context("fork")
    outcomes: list[str] = []
    for trial in range(6):
        path = str(tmp_path / f"cache-{trial}.sqlite")
        barrier, results = context.Barrier(12), context.Queue()
        workers = [context.Process(target=_open, args=(path, barrier, results)) for _ in range(12)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        outcomes += [results.get(timeout=10) for _ in workers]
        reopened = ResponseCache(path)
        assert reopened._db.execute("SELECT count(*) FROM entries").fetchone()[0] == 12
    assert set(outcomes) == {"ok"}, [o for o in outcomes if o != "ok"][:3]
