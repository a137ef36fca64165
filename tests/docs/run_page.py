"""Run one page's Python blocks in order in one namespace, as a reader pasting them would.

    python -m tests.docs.run_page blocks.json shown.json

`blocks.json` lists the blocks to run (`page`, `line`, `file`, `code`, `setup`); the working
directory and the environment are the caller's. What a notebook would display, the repr of a
block's trailing bare expression (or null), is written to `shown.json`, one entry per block, so a
test can compare it with the value the page shows in a comment. Each block is compiled with the page as its file name and
its real line numbers, so a traceback points into the markdown. Top-level `await` is allowed
(as in a notebook cell) and runs on one event loop kept for the whole page. The first failing
block ends the run with exit status 1 and a line `docs-test: FAILED <page>:<line>` on stderr.

A separate interpreter per page keeps what a page does to the process (patches of asyncio, a
global tracer provider, logging, the working directory) out of every other page and test.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import inspect
import json
import sys
import traceback
from pathlib import Path
from typing import Any

SHOWN = "__docs_test_shown__"


def compiled(code: str, filename: str, first_line: int, *, show: bool = False) -> Any:
    """The code; with `show`, its trailing bare expression's value is bound to SHOWN."""
    tree = ast.parse(code, filename=filename)
    if show and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        target = ast.Name(id=SHOWN, ctx=ast.Store())
        tree.body[-1] = ast.copy_location(ast.Assign(targets=[target], value=last.value), last)
        ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    return compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def run(code: Any, namespace: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
    if code.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(eval(code, namespace))
    else:
        exec(code, namespace)


def error_outcomes(namespace: dict[str, Any]) -> dict[str, list[str]]:
    """Per evaluation result in the namespace (anything with `errors()` and `outcome()`), its
    error outcomes as `row metric: ErrorType: message`."""
    found: dict[str, list[str]] = {}
    for name, value in namespace.items():
        if name.startswith("_") or not (hasattr(value, "errors") and hasattr(value, "outcome")):
            continue
        try:
            errors = value.errors()
        except Exception:  # not an evaluation result after all
            continue
        if errors:
            found[name] = [
                f"{row} {metric}: {error.error_type}: {error.message}"[:300]
                for row, metric, error in errors
            ]
    return found


def main(path: str, shown_path: str) -> int:
    blocks = json.loads(Path(path).read_text(encoding="utf-8"))
    shown: list[str | None] = []
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    loop = asyncio.new_event_loop()
    for block in blocks:
        where = f"{block['page']}:{block['line']}"
        try:
            for setup in block["setup"]:
                run(compiled(setup, f"<docs-test setup before {where}>", 1), namespace, loop)
            code = compiled(block["code"], block["file"], block["line"], show=True)
            run(code, namespace, loop)
            shown.append(repr(namespace.pop(SHOWN)) if SHOWN in namespace else None)
        except BaseException:  # any failure, SystemExit included, ends the page
            traceback.print_exc()
            print(f"docs-test: FAILED {where}", file=sys.stderr)
            return 1
        finally:
            report = {"shown": shown, "errors": error_outcomes(namespace)}
            Path(shown_path).write_text(json.dumps(report), encoding="utf-8")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
