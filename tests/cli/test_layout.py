"""The command modules do not import `assay.cli.app`: the app imports every command, so a command
importing the app back would close an import cycle. Commands print through `assay.cli.console`."""

from __future__ import annotations

import ast
from pathlib import Path

import assay.cli

CLI = Path(assay.cli.__file__).parent


def test_no_command_module_imports_the_app():
    offenders = []
    for file in sorted(CLI.glob("*.py")):
        if file.name == "app.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "assay.cli.app":
                offenders.append(file.name)
            if isinstance(node, ast.Import) and any(a.name == "assay.cli.app" for a in node.names):
                offenders.append(file.name)
    assert not offenders, offenders
