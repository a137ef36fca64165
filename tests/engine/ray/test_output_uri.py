"""An output given as an fsspec URI: rows committed as whole part files by the workers and read back
through fsspec. The second file system is a real FTP server on 127.0.0.1 (pyftpdlib), which every
Ray worker process reaches by its URL; `memory://` lives in one process, so a run on it is refused
when the workers start; `file://` is a local directory like a plain path."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.output import OutputDirectory, row_ids
from assay.engine.ray.storage import Storage, shown
from assay.engine.ray.worker import PartWriter
from assay.errors import UsageError
from assay.metrics.general.aspect_critic import AspectCritic
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell, Ok
from tests.engine.ray.test_errors import ROWS as TWO_ROWS
from tests.engine.ray.test_errors import assay_cli

pytestmark = [
    pytest.mark.ray,
    # pyftpdlib still imports asyncore/asynchat (deprecated in 3.11); the server works the same
    pytest.mark.filterwarnings("ignore:The asyn:DeprecationWarning"),
]

ROWS = [{"user_input": f"question {n}", "response": f"answer {n}"} for n in range(30)]


@pytest.fixture
def ftp_home(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real FTP server on a free loopback port: (URL with user and password, its home dir)."""
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import ThreadedFTPServer

    home = tmp_path / "ftp"
    home.mkdir()
    users = DummyAuthorizer()
    users.add_user("assay", "s3cret", str(home), perm="elradfmwMT")
    handler = type("Handler", (FTPHandler,), {"authorizer": users})
    server = ThreadedFTPServer(("127.0.0.1", 0), handler)
    logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
    port = server.socket.getsockname()[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"timeout": 0.1, "handle_exit": False}, daemon=True
    )
    thread.start()
    try:
        yield f"ftp://assay:s3cret@127.0.0.1:{port}", home
    finally:
        server.close_all()
        thread.join(timeout=5)


def critic() -> AspectCritic:
    return AspectCritic(name="has_seven", definition="the response has a seven")


def test_committed_parts_are_read_and_temporary_ones_never(tmp_path):
    out = OutputDirectory(f"memory://{tmp_path.name}/run")
    assert out.open(run_fingerprint="f", description={}, resume=True) is False
    writer = PartWriter(out.storage, "w0")
    assert not writer.appends and not writer.due()
    writer.write("a", [Cell(row=0, metric="m", outcome=Ok(value=1.0))])
    name, data = writer.take()
    assert writer.take() is None  # taken once
    # A commit cut short leaves only its temporary file: never listed, never read as rows.
    fs = out.storage.fs
    fs.pipe_file(f"{out.storage.root}/rows/.tmp-0123-{name.split('/')[1]}", data)
    assert out.collect({"a": 0}, {"m"}).cells == {}
    out.storage.write_whole(name, data)
    found = out.collect({"a": 0}, {"m"})
    assert found.cells[("a", "m")].outcome == Ok(value=1.0) and found.unreadable_lines == 0
    assert out.storage.parts() == [name]
    # The same URI opened again finds the run and its rows.
    assert OutputDirectory(f"memory://{tmp_path.name}/run").open(
        run_fingerprint="f", description={}, resume=True
    )


def test_passwords_are_not_shown_and_bad_uris_name_the_output():
    assert shown("ftp://me:pw@host:21/run") == "ftp://me:***@host:21/run"
    assert shown("simplecache::s3://bucket/run") == "simplecache::s3://bucket/run"
    with pytest.raises(UsageError, match=r"output nosuchfs://x: cannot open it"):
        Storage("nosuchfs://x")


def test_rows_go_to_an_ftp_server_through_fsspec(ray_cluster, judged, server, ftp_home):
    url, home = ftp_home
    judge = judged()
    executor = RayExecutor(output=f"{url}/run", num_workers=2, max_in_flight=4, block_rows=4)
    result = evaluate(ROWS, [critic()], llm=judge, executor=executor, show_progress=False)

    assert [row["has_seven"].value for row in result.outcomes] == [
        1 if "7" in row["response"] else 0 for row in ROWS
    ]
    assert "s3cret" not in result.run_dir and result.run_dir.endswith("/run")
    names = sorted(path.name for path in (home / "run" / "rows").iterdir())
    assert names and all(name.startswith("part-w") for name in names), names  # no temp, no mark
    ids = row_ids(EvaluationDataset.from_list(ROWS))
    again = OutputDirectory(f"{url}/run").collect({r: i for i, r in enumerate(ids)}, {"has_seven"})
    assert len(again.cells) == len(ROWS) and again.duplicate_cells == 0
    summary = json.loads((home / "run" / "summary.json").read_text())
    assert summary["metrics"][0]["n_ok"] == len(ROWS) and summary["run"]["rows_scored"] == len(ROWS)
    assert len(server.chat_requests) == len(ROWS)


def test_memory_uri_is_refused_when_the_workers_start(ray_cluster, judged, tmp_path):
    executor = RayExecutor(output=f"memory://{tmp_path.name}/run", num_workers=1)
    with pytest.raises(UsageError, match=r"does not see what it writes there.*memory://"):
        evaluate(ROWS[:2], [critic()], llm=judged(), executor=executor, show_progress=False)


def test_a_file_uri_on_the_command_line_is_a_local_directory(gcs_address, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in TWO_ROWS))
    out = tmp_path / "out"
    done = assay_cli(
        *("evaluate", str(data), "-m", "exact_match", "--ray", gcs_address, "--workers", "1"),
        *("--output", out.as_uri(), "--no-progress"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert f"rows and summary.json in {out.as_uri()}" in done.stdout
    assert json.loads((out / "summary.json").read_text())["metrics"][0]["n_ok"] == 2
    assert len(list((out / "rows").glob("part-*.jsonl"))) == 1  # appended: one file per worker


def test_a_killed_worker_on_an_ftp_output_loses_no_row_and_duplicates_none(
    ray_cluster, judged, server, ftp_home
):
    """A worker killed mid-run loses the rows it had gathered but not committed; they are handed
    out again, and no row is read twice."""
    from tests.engine.ray.conftest import kill_9, rows_written, wait_until, worker_pids

    url, home = ftp_home
    rows = [{"user_input": f"question {n}", "response": f"answer {n}"} for n in range(120)]
    judge = judged(latency=0.05)
    executor = RayExecutor(output=f"{url}/run", num_workers=2, max_in_flight=4, block_rows=4)
    finished: dict[str, object] = {}

    def run() -> None:
        try:
            finished["result"] = evaluate(
                rows, [critic()], llm=judge, executor=executor, show_progress=False
            )
        except BaseException as exc:
            finished["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    written = home / "run"
    wait_until(
        lambda: (
            ((written / "rows").is_dir() and rows_written(written) >= 16) or not thread.is_alive()
        ),
        timeout=90,
        what="16 rows committed",
    )
    assert thread.is_alive(), f"the run ended before a worker could be killed: {finished}"
    kill_9(min(worker_pids(written)))
    thread.join(timeout=120)
    assert not thread.is_alive() and "error" not in finished, finished.get("error")

    result = finished["result"]
    assert [row["has_seven"].value for row in result.outcomes] == [
        1 if "7" in row["response"] else 0 for row in rows
    ]
    assert executor.last_run.workers_lost >= 1
    ids = row_ids(EvaluationDataset.from_list(rows))
    again = OutputDirectory(f"{url}/run").collect({r: i for i, r in enumerate(ids)}, {"has_seven"})
    assert len(again.cells) == len(rows) and again.unreadable_lines == 0
    assert again.duplicate_cells == 0  # what a dead worker had not committed, it never wrote
