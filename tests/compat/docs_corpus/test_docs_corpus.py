"""Run every example of the Ragas 0.4 documentation corpus as written, with `ragas` -> `assay`.

Each file in `examples/` is one code example from the Ragas docs (spec seed 000), re-indented
from the dump, with only the changes its header lists. The runner executes it the way a user
would: in a fresh temporary working directory, in a fresh namespace whose `__name__` is
"__main__", with `OPENAI_API_KEY` / `OPENAI_BASE_URL` (and assay's `ASSAY_LLM` /
`ASSAY_EMBEDDINGS`) pointing at a generic OpenAI-compatible server on 127.0.0.1 (`server.py`).
Files with top-level `await` (notebook cells) are compiled with `PyCF_ALLOW_TOP_LEVEL_AWAIT` and
run with `asyncio.run`, as IPython does. The value of a trailing bare expression (what a notebook
displays) is kept, so a documented output can be asserted.

Directives in an example's header (`# corpus: ...`):

    requires PKG          skip via pytest.importorskip(PKG) when the package is not installed
    calls-model           the example calls a model: the loopback server must have seen a request
    expect-stdout TEXT    a line the docs show as printed output (exact)
    expect-value VALUE    the docs' displayed value of the trailing expression (exact, or ==)
    expect-approx V TOL [EXPR]   as expect-value (or the value of EXPR in the example's namespace,
                          e.g. result.value) where the docs print a rounded number
    expect-repr TEXT             repr() of the trailing expression, as the docs display it
    expect-eval EXPR VALUE       the value of EXPR in the example's namespace equals VALUE
    expect-chat-requests N       the server saw exactly N chat requests (a documented cache hit)
    expect-embedding-requests N  the server saw exactly N embedding requests
    slow                  mark the example slow (not in the default run)
    differs EXC: TEXT -- WHY     assay deliberately differs from Ragas here (documented on
                          docs/coming-from-ragas.md): the example raises EXC with TEXT in its message
    docs-bug EXC: TEXT -- WHY    the docs' code fails under Ragas too (WHY says how): it raises EXC

Examples that differ count against the floor: at least 95% of the runnable examples that are not
docs bugs must run as written (`test_corpus_floor`).
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.compat.docs_corpus.server import serve
from tests.models.fake_openai import FakeOpenAI

EXAMPLES_DIR = Path(__file__).parent / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("[0-9][0-9][0-9]_*.py"))
RESULT_NAME = "__corpus_result__"
_DIRECTIVE = re.compile(r"^#\s*corpus:\s*(?P<key>[a-z-]+)\s*(?P<rest>.*?)\s*$")


@dataclass
class Directives:
    requires: list[str] = field(default_factory=list)
    calls_model: bool = False
    expect_stdout: list[str] = field(default_factory=list)
    expect_value: str | None = None
    expect_approx: tuple[float, float, str | None] | None = None
    expect_repr: str | None = None
    expect_eval: list[tuple[str, str]] = field(default_factory=list)
    chat_requests: int | None = None
    embedding_requests: int | None = None
    slow: bool = False
    raises: tuple[str, str, str] | None = None  # (kind, exception name, message fragment)


def directives(path: Path) -> Directives:
    found = Directives()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            if line.strip():
                break  # the header ends at the first line of code
            continue
        match = _DIRECTIVE.match(line)
        if not match:
            continue
        key, rest = match["key"], match["rest"]
        if key == "requires":
            found.requires.append(rest)
        elif key == "calls-model":
            found.calls_model = True
        elif key == "expect-stdout":
            found.expect_stdout.append(rest)
        elif key == "expect-value":
            found.expect_value = rest
        elif key == "expect-approx":
            value, tolerance, *expression = rest.split(maxsplit=2)
            found.expect_approx = (
                float(value),
                float(tolerance),
                expression[0] if expression else None,
            )
        elif key == "expect-repr":
            found.expect_repr = rest
        elif key == "expect-eval":
            expression, value = rest.split(maxsplit=1)
            found.expect_eval.append((expression, value))
        elif key == "expect-chat-requests":
            found.chat_requests = int(rest)
        elif key == "expect-embedding-requests":
            found.embedding_requests = int(rest)
        elif key == "slow":
            found.slow = True
        elif key in ("differs", "docs-bug"):
            expected, _, _why = rest.partition(" -- ")
            name, _, fragment = expected.partition(": ")
            found.raises = (key, name.strip(), fragment.strip())
        else:  # pragma: no cover - a typo in a header
            raise ValueError(f"{path.name}: unknown corpus directive {key!r}")
    return found


def _params() -> list[Any]:
    params = []
    for path in EXAMPLES:
        marks = [pytest.mark.slow] if directives(path).slow else []
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


def compile_example(path: Path) -> Any:
    """The example's code; a trailing bare expression is bound to `__corpus_result__`."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())], value=last.value),
            last,
        )
        ast.fix_missing_locations(tree)
    return compile(tree, str(path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def run_example(path: Path, workdir: Path) -> dict[str, Any]:
    """Execute one example in a fresh namespace, as `python example.py` (or a notebook) would."""
    code = compile_example(path)
    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__file__": str(workdir / path.name),
        "__builtins__": builtins,
    }
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))  # top-level await: run the body as a coroutine
    else:
        exec(code, namespace)
    return namespace


def run_in_own_process(path: Path, workdir: Path) -> None:
    """Run an example in a fresh interpreter (same environment, same runner): one that calls
    `nest_asyncio.apply()`, as notebooks in the docs do, patches asyncio for the whole process,
    which would leak into every later test of this session."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    code = (
        "from pathlib import Path; import sys; "
        "from tests.compat.docs_corpus.test_docs_corpus import run_example; "
        "run_example(Path(sys.argv[1]), Path(sys.argv[2]))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(workdir)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{path.name} failed in its own process:\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


@pytest.fixture
def example_env(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh working directory and the environment that points every model at the server."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("ASSAY_LLM", server.model_string("gpt-4o-mini"))
    monkeypatch.setenv("ASSAY_EMBEDDINGS", server.model_string("text-embedding-3-small"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test")  # the docs say to export them
    monkeypatch.setenv("GOOGLE_API_KEY", "loopback-test")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "assay-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    for name in ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ASSAY_CACHE_URL", "ASSAY_LOCAL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(workdir)
    try:
        from assay.metrics.base import forget_default_models
    except ImportError:  # pragma: no cover - the module moved
        forget_default_models = None
    if forget_default_models is not None:
        forget_default_models()
    server.reset_records()
    yield workdir
    if forget_default_models is not None:
        forget_default_models()


def test_corpus_floor() -> None:
    """At least 110 examples that need no package missing here; of those that are not docs bugs,
    at least 95% run as written (the rest differ from Ragas on purpose, and say so)."""
    runnable = [p for p in EXAMPLES if not directives(p).requires]
    assert len(runnable) >= 110, f"only {len(runnable)} runnable examples"
    kinds = [(directives(p).raises or ("runs",))[0] for p in runnable]
    fair = [kind for kind in kinds if kind != "docs-bug"]
    assert fair.count("runs") >= 0.95 * len(fair), (
        f"{fair.count('differs')} of {len(fair)} examples differ from Ragas"
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", _params())
def test_docs_example(
    path: Path, example_env: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    found = directives(path)
    for package in found.requires:
        pytest.importorskip(package)

    if "nest_asyncio" in path.read_text(encoding="utf-8"):
        run_in_own_process(path, example_env)
        if found.calls_model:
            assert server.count > 0, "the example calls a model, but the server saw no request"
        return

    if found.raises is not None:
        _kind, name, fragment = found.raises
        with pytest.raises(Exception) as raised:
            run_example(path, example_env)
        assert type(raised.value).__name__ == name, repr(raised.value)
        assert fragment in str(raised.value)
        return
    namespace = run_example(path, example_env)
    out = capsys.readouterr().out

    if found.calls_model:
        assert server.count > 0, "the example calls a model, but the loopback server saw no request"
    if found.chat_requests is not None:
        assert len(server.chat_requests) == found.chat_requests
    if found.embedding_requests is not None:
        assert len(server.embedding_requests) == found.embedding_requests
    lines = [line.rstrip() for line in out.splitlines()]
    for expected in found.expect_stdout:
        assert expected in lines, f"expected the printed line {expected!r}; printed:\n{out}"
    if found.expect_value is not None:
        assert RESULT_NAME in namespace, "the example ends without a displayed expression"
        assert namespace[RESULT_NAME] == ast.literal_eval(found.expect_value)
    if found.expect_repr is not None:
        assert RESULT_NAME in namespace, "the example ends without a displayed expression"
        assert repr(namespace[RESULT_NAME]) == found.expect_repr
    if found.expect_approx is not None:
        target, tolerance, expression = found.expect_approx
        if expression is None:
            assert RESULT_NAME in namespace, "the example ends without a displayed expression"
            shown = namespace[RESULT_NAME]
        else:
            shown = eval(expression, dict(namespace))
        assert shown == pytest.approx(target, abs=tolerance)
    for expression, value in found.expect_eval:
        assert eval(expression, dict(namespace)) == ast.literal_eval(value), expression
