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


# The commands whose logic moved into the library (issue #40, step 5): each parses its options,
# calls one library function and prints. A command that grows logic again fails here; put the
# logic in the library function instead (named beside each command).
THIN_COMMANDS = {
    "evaluate.py": ("evaluate_command", "assay.engine.file_run.evaluate_file"),
    "benchmark.py": ("benchmark_command", "assay.benchmark.measure.measure"),
    "align.py": ("align_command", "assay.alignment.fit.align_judge"),
    "simulate.py": ("simulate_command", "assay.simulation.file_run.simulate_file"),
    "trajectories.py": ("trajectories_command", "assay.integrations.trajectory.convert_export"),
}
MAX_BODY_LINES = 45  # after the docstring: imports, the options object, the call, printing
MAX_BRANCHES = 3  # if / for / while / try / match statements and conditional expressions


def _command(file: str, name: str) -> ast.FunctionDef:
    tree = ast.parse((CLI / file).read_text(encoding="utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_the_moved_commands_stay_thin():
    problems = []
    for file, (name, library) in THIN_COMMANDS.items():
        command = _command(file, name)
        body = command.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring is --help text
        lines = command.end_lineno - body[0].lineno + 1
        branches = sum(
            isinstance(node, (ast.If, ast.For, ast.While, ast.Try, ast.Match, ast.IfExp))
            for statement in body
            for node in ast.walk(statement)
        )
        # One line per parameter: the options are declared as Annotated aliases above the command.
        parameters = len(command.args.args)
        signature = command.args.args[-1].end_lineno - command.lineno + 2  # to ") -> None:"
        if lines > MAX_BODY_LINES:
            problems.append(f"{name}: {lines} lines after its docstring, at most {MAX_BODY_LINES}")
        if branches > MAX_BRANCHES:
            problems.append(f"{name}: {branches} branches, at most {MAX_BRANCHES}")
        if signature > parameters + 2:
            problems.append(f"{name}: {signature} signature lines for {parameters} parameters")
        if problems and problems[-1].startswith(name):
            problems.append(f"{name}: move the logic into {library}")
    assert not problems, problems


def test_the_library_functions_behind_the_commands_exist():
    import importlib

    for name, library in THIN_COMMANDS.values():
        module, _, function = library.rpartition(".")
        assert callable(getattr(importlib.import_module(module), function)), (name, library)
