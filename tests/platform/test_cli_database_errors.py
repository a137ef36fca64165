"""A platform command whose database cannot be reached, or `assay serve` on a port in use, says so
in one line (exit code 2), with no traceback: a wrong URL, a server that is down or a port taken
is the user's to fix, not a bug."""

from __future__ import annotations

import sys

import pytest

from .conftest import free_port


@pytest.mark.parametrize("command", [["keys", "list"], ["worker"]])
def test_an_unreachable_database_is_one_line(command, monkeypatch, capfd):
    from assay.cli.app import main

    url = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/assay"  # nobody listens there
    monkeypatch.setattr(sys, "argv", ["assay", *command, "--db", url])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 2
    err = capfd.readouterr().err
    assert "error: cannot use the database: connection failed" in err
    assert "Connection refused" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_port_in_use_is_one_line_before_any_work(tmp_path, monkeypatch, capfd):
    import socket

    from assay.cli.app import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = f"sqlite:///{tmp_path / 'never.sqlite'}"
        monkeypatch.setattr(sys, "argv", ["assay", "serve", "--port", str(port), "--db", db])
        with pytest.raises(SystemExit) as ended:
            main()
    assert ended.value.code == 2
    err = capfd.readouterr().err.strip()
    assert err == (
        f"error: cannot listen on 127.0.0.1:{port} (Address already in use): another server may "
        "have it; choose another with --port"
    )
    assert not (tmp_path / "never.sqlite").exists()  # refused before the database was made
