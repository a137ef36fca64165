"""A platform command whose database cannot be reached says so in one line (exit code 2), with
no traceback: a wrong URL or a server that is down is the user's to fix, not a bug."""

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
