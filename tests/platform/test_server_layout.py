"""The server's rooms: every module imports on its own in a fresh interpreter, no server module
imports another in a cycle, and each subpackage imports only the subpackages its `__init__`
docstring allows (the layers form a DAG: app -> api/ui/otlp/jobs -> auth -> storage -> schemas)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import assay.platform.server as server

ROOT = Path(server.__file__).parent
PACKAGE = "assay.platform.server"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if "migrations" in rel.parts:  # Alembic scripts: run by Alembic, never imported
            continue
        parts = [p for p in rel.parts if p != "__init__"]
        found[".".join([PACKAGE, *parts])] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Every server module `path` imports, at module level or inside a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in MODULES else node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: use absolute imports")
    return {name for name in out if name in MODULES}


GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}


def _room(module: str) -> str:
    rest = module[len(PACKAGE) + 1 :]
    return rest.split(".")[0] if rest else ""


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_server_modules():
    """Module level: no server module imports itself through others (imports inside functions
    count too, so a cycle cannot hide behind a late import)."""
    assert _cycle(GRAPH) is None


# What each room may import (besides itself and modules outside the server). The package's
# `__init__` and `conditions` (a pure parser) are open to all.
ALLOWED = {
    "": set(),
    "conditions": set(),
    "config": set(),
    "errors": set(),
    "rate_limit": set(),
    "schemas": {"conditions", "errors"},
    "storage": {"schemas", "conditions", "errors", "config"},
    "auth": {"storage", "config", "errors"},
    "state": {"storage", "auth", "errors"},
    "jobs": {"storage", "schemas", "errors"},
    "otlp": {"storage", "schemas", "errors", "state", "config"},
    "api": {"storage", "schemas", "auth", "errors", "state"},
    "ui": {"storage", "schemas", "auth", "errors", "state"},
    "app": {"api", "ui", "otlp", "jobs", "storage", "config", "errors", "rate_limit", "state"},
}


def test_every_room_is_known():
    assert {_room(m) for m in MODULES} == set(ALLOWED)


def test_rooms_import_only_the_rooms_below_them():
    wrong = sorted(
        f"{a} -> {b}"
        for a, targets in GRAPH.items()
        for b in targets
        if _room(b) != _room(a) and _room(b) not in ALLOWED[_room(a)] | {""}
    )
    assert wrong == []
    rooms = {r: {_room(b) for a in GRAPH if _room(a) == r for b in GRAPH[a]} - {r} for r in ALLOWED}
    assert _cycle(rooms) is None


def test_every_subpackage_says_what_it_holds_and_may_import():
    for init in ROOT.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, init
        if init.parent.name != "conditions":
            assert "May import" in doc, init


# One interpreter loads the server's third-party libraries and the assay library (which never
# imports the platform), then forks a child per server module that imports that module alone:
# each child starts with no server module loaded, so an import-order dependence or a hidden
# cycle between the server's modules fails as it would in a fresh interpreter, at a fraction of a
# fresh interpreter's start-up per module.
_FORKING_IMPORTER = r"""
import importlib, os, sys
import alembic, fastapi, httpx, jinja2, pydantic, sqlalchemy, sqlalchemy.orm, starlette
import assay
assert not [m for m in sys.modules if m.startswith("assay.platform")], "the platform preloaded"
failed = []
for module in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as exc:
            sys.stderr.write(f"{module}: {type(exc).__name__}: {exc}\\n")
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:
        failed.append(module)
print(" ".join(failed))
"""


def test_each_module_imports_alone_with_no_server_module_loaded_before_it():
    """Whatever is imported first, each module imports (no order dependence, no hidden cycle)."""
    done = subprocess.run(
        [sys.executable, "-c", _FORKING_IMPORTER, *sorted(MODULES)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [], done.stderr[-4000:]


@pytest.mark.slow  # the same in a new interpreter per module (~2 s each): what the fork stands for
@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_alone_in_a_fresh_interpreter(module):
    """Whatever is imported first, each module imports (no order dependence, no hidden cycle)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
