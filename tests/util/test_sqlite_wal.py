"""Many connections switching one new SQLite file to WAL at once all succeed."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from assay._util.sqlite_wal import is_busy, use_wal


def test_connections_racing_to_switch_a_new_file_all_end_in_wal(tmp_path):
    for round_ in range(15):
        path = tmp_path / f"fresh-{round_}.sqlite"
        connections = [sqlite3.connect(path, timeout=30, check_same_thread=False) for _ in range(6)]
        start = threading.Barrier(len(connections))
        errors: list[BaseException] = []

        def switch(connection: sqlite3.Connection, start=start, errors=errors) -> None:
            start.wait()
            try:
                use_wal(connection)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=switch, args=(c,)) for c in connections]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        modes = {c.execute("PRAGMA journal_mode").fetchone()[0] for c in connections}
        assert modes == {"wal"}
        for connection in connections:
            connection.close()


def test_a_file_already_in_wal_is_left_alone(tmp_path):
    path = tmp_path / "db.sqlite"
    first = sqlite3.connect(path)
    use_wal(first)
    first.execute("BEGIN IMMEDIATE")  # holds the write lock: switching modes would be refused
    second = sqlite3.connect(path, timeout=0.1)
    use_wal(second)  # only reads the mode, so it does not wait for the lock
    assert second.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    first.rollback()
    first.close()
    second.close()


@pytest.mark.parametrize(
    ("error", "busy"),
    [
        (sqlite3.OperationalError("database is locked"), True),
        (sqlite3.OperationalError("database table is busy"), True),
        (sqlite3.OperationalError("no such table: t"), False),
        (ValueError("locked"), False),
    ],
)
def test_busy_refusals_are_told_from_other_errors(error, busy):
    assert is_busy(error) is busy


def test_sqlalchemy_wrapped_refusals_count_as_busy():
    from sqlalchemy.exc import OperationalError

    wrapped = OperationalError("PRAGMA", {}, sqlite3.OperationalError("database is locked"))
    assert is_busy(wrapped)
