"""Every Ragas module path the Ragas documentation imports from exists under assay.

The import statements are read from the documentation itself (spec seed 000, in place), rewritten
from `ragas` to `assay` and run; the paths assay documents as not provided must refuse in one line.
The table in `assay/compat/ragas/paths.py` is checked against the thin modules it describes, and
no core module may import the compatibility package.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

import assay
from assay.compat.ragas.paths import (
    NATIVE,
    NOT_PROVIDED,
    RAGAS_PATHS,
    SHARED_MODULE_NAMES,
    assay_path,
)
from tests.shared_dir import candidates

SRC = Path(assay.__file__).resolve().parent
CORE = ("schema", "models", "prompts", "metrics", "engine", "stats", "errors")


def _seed_000() -> str:
    places = candidates(Path("spec") / "seeds", "ASSAY_SPEC_DIR")
    for place in places:
        found = sorted(place.glob("000_*.txt")) if place.is_dir() else []
        if found:
            return found[0].read_text(encoding="utf-8")
    pytest.fail(
        "spec seed 000 (the Ragas documentation) is missing: looked in "
        + ", ".join(map(str, places))
        + "; set ASSAY_SPEC_DIR to the folder holding 000_*.txt (read in place, never copied)"
    )


_NAME = r"[A-Za-z_]\w*(?:\s+as\s+[A-Za-z_]\w*)?"
_FROM = re.compile(
    rf"\bfrom\s+(ragas(?:\.\w+)*)\s+import\s+(\([^)]*\)|\*|{_NAME}(?:\s*,\s*{_NAME})*)"
)
_IMPORT = re.compile(r"\bimport\s+(ragas(?:\.\w+)*)")


def documented_imports(text: str) -> dict[str, set[str]]:
    """Ragas module path -> the names the docs import from it ("" for `import ragas.x`).

    The dump keeps code on one line (its newlines were collapsed), so a statement ends where the
    list of names does: after the closing parenthesis, or at the first word not joined by a comma.
    """
    found: dict[str, set[str]] = {}
    for match in _FROM.finditer(text):
        names = re.sub(r"#[^\n]*", "", match.group(2).strip("()"))
        for part in names.split(","):
            name = part.strip().split(" as ")[0].split()
            if name:
                found.setdefault(match.group(1), set()).add(name[0])
    for match in _IMPORT.finditer(text):
        found.setdefault(match.group(1), set()).add("")
    return found


@pytest.fixture(scope="module")
def imports() -> dict[str, set[str]]:
    return documented_imports(_seed_000())


def test_the_reader_finds_the_statements_of_the_docs(imports):
    # Guards the parser: a regex that quietly matched nothing would make the next test pass.
    assert len(imports) >= 60
    assert {"llm_factory", "LangchainLLMWrapper"} <= imports["ragas.llms"]
    assert "NLIStatementPrompt" in imports["ragas.metrics.collections.faithfulness.util"]
    assert "" in imports["ragas.messages"]  # `import ragas.messages as r`
    parsed = documented_imports("x from ragas.metrics import ( A, B as C, # note\n D ) y = 1")
    assert parsed == {"ragas.metrics": {"A", "B", "D"}}


def test_every_documented_import_runs_under_assay(imports):
    failures = []
    for path, names in sorted(imports.items()):
        if path in NOT_PROVIDED:
            continue
        try:
            module = importlib.import_module(assay_path(path))
        except Exception as exc:
            failures.append(f"import {assay_path(path)}: {type(exc).__name__}: {exc}")
            continue
        missing = sorted(n for n in names if n and not hasattr(module, n))
        if missing:
            failures.append(f"{assay_path(path)} lacks {', '.join(missing)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", sorted(NOT_PROVIDED))
def test_an_integration_not_provided_says_so_in_one_line(path):
    sys.modules.pop(assay_path(path), None)
    with pytest.raises(ImportError) as raised:
        importlib.import_module(assay_path(path))
    message = str(raised.value)
    assert "\n" not in message
    assert f"assay does not provide {path}" in message
    assert "coming-from-ragas" in message


def test_the_not_provided_list_is_what_the_docs_import(imports):
    # Only integrations the docs actually import are refused; nothing else is excused.
    assert set(NOT_PROVIDED) <= set(imports)
    assert all(".integrations." in path for path in NOT_PROVIDED)


@pytest.mark.parametrize("path", sorted(RAGAS_PATHS))
def test_each_thin_module_reexports_its_table_entry(path):
    module = importlib.import_module(assay_path(path))
    table = RAGAS_PATHS[path]
    assert sorted(module.__all__) == sorted(table)
    for name in table:
        assert getattr(module, name) is not None


@pytest.mark.parametrize("path", sorted(NATIVE))
def test_native_paths_hold_the_ragas_names(path):
    module = importlib.import_module(assay_path(path))
    missing = [name for name in NATIVE[path] if not hasattr(module, name)]
    assert not missing


def _module_files() -> dict[str, Path]:
    files = {}
    for file in SRC.rglob("*.py"):
        parts = file.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = file
    return files


def _imported_modules(file: Path) -> set[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_thin_modules_only_reexport():
    """A Ragas path module holds a docstring, one import and one statement, nothing else."""
    files = _module_files()
    thin = {assay_path(p) for p in RAGAS_PATHS} | {assay_path(p) for p in NOT_PROVIDED}
    for name in sorted(thin):
        body = ast.parse(files[name].read_text(encoding="utf-8")).body
        assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), name
        assert isinstance(body[1], ast.ImportFrom), name
        assert body[1].module == "assay.compat.ragas.paths", name
        assert len(body) == 3, f"{name} holds more than the re-export"


def test_no_core_module_imports_the_compat_package():
    files = _module_files()
    thin = {assay_path(p) for p in RAGAS_PATHS} | {assay_path(p) for p in NOT_PROVIDED}
    offenders = []
    for name, file in sorted(files.items()):
        layer = name.split(".")[1] if "." in name else ""
        if layer not in CORE or name in thin:
            continue
        if any(
            m == "assay.compat" or m.startswith("assay.compat.") for m in _imported_modules(file)
        ):
            offenders.append(name)
    assert not offenders, f"core modules importing assay.compat: {offenders}"


def test_compat_only_adds_names_to_shared_modules():
    """`install` added the Ragas-only names, and none of them shadows a name of assay's own."""
    for module_name, names in SHARED_MODULE_NAMES.items():
        module = importlib.import_module(module_name)
        source = _module_files()[module_name].read_text(encoding="utf-8")
        for name in names:
            assert hasattr(module, name), f"{module_name}.{name}"
            assert not re.search(rf"^(class|def) {name}\b|^{name} =", source, re.M), name


def test_metric_classes_carry_ragas_prompt_attributes_only_through_compat():
    from assay.compat.ragas.metric_prompts import PROMPT_ATTRIBUTES
    from assay.compat.ragas.prompt_attributes import PromptAttribute

    for cls, attributes in PROMPT_ATTRIBUTES.items():
        source = Path(sys.modules[cls.__module__].__file__).read_text(encoding="utf-8")
        for name in attributes:
            assert isinstance(vars(cls)[name], PromptAttribute)
            declared = re.search(rf"^    {name}(: [^=]+)? = ", source, re.M)
            assert not declared, f"{cls.__name__}.{name} is declared in core"


# -- the table on docs/coming-from-ragas.md ---------------------------------------------------------
DOCS = Path(__file__).resolve().parents[2] / "docs" / "coming-from-ragas.md"


def paths_table() -> str:
    """The module-path table as the docs page must show it (generated from paths.py)."""
    rows = ["| Ragas path | assay path | names |", "|---|---|---|"]
    for path in sorted(set(RAGAS_PATHS) | set(NATIVE) | set(NOT_PROVIDED)):
        if path in NOT_PROVIDED:
            rows.append(f"| `{path}` | not provided | {NOT_PROVIDED[path]} |")
        else:
            names = RAGAS_PATHS.get(path) or NATIVE[path]
            shown = ", ".join(f"`{name}`" for name in sorted(names))
            more = " (assay's own module; among its names)" if path in NATIVE else ""
            rows.append(f"| `{path}` | `{assay_path(path)}`{more} | {shown} |")
    return "\n".join(rows)


def test_the_docs_page_shows_the_table_of_paths():
    text = DOCS.read_text(encoding="utf-8")
    start, end = "<!-- paths:start -->\n", "\n<!-- paths:end -->"
    shown = text[text.index(start) + len(start) : text.index(end)]
    assert shown == paths_table(), (
        "docs/coming-from-ragas.md's table of paths is stale; regenerate it with "
        "`python -c 'from tests.compat.test_ragas_paths import paths_table; print(paths_table())'`"
    )


def test_ragas_method_spellings_are_defined_only_in_compat():
    """`single_turn_ascore`, `get_prompts`, ... reach assay's metrics from compat, attached by
    `install`; no core module defines them, and every metric has them."""
    from assay.compat.ragas import metric_methods, prompt_methods
    from assay.metrics import AspectCritic, BleuScore

    names = set(metric_methods.METHODS) | set(prompt_methods.METHODS)
    offenders = []
    for module, file in _module_files().items():
        if module.split(".")[1:2] and module.split(".")[1] in CORE:
            source = file.read_text(encoding="utf-8")
            methods = (rf"^[ \t]+(async )?def {n}\(" for n in names)
            offenders += [f"{module}: {m}" for m in methods if re.search(m, source, re.M)]
    assert not offenders
    assert callable(BleuScore().single_turn_ascore)
    assert set(AspectCritic(name="a", definition="d").get_prompts()) == {
        "single_turn_aspect_critic_prompt"
    }


def test_no_thin_module_shadows_a_name_of_its_parent_package():
    """`import assay.x` binds `x` in `assay`: a thin module must not be named like a function or
    class its parent exports (the way a module `assay.experiment` would hide `assay.experiment`)."""
    for path in [*RAGAS_PATHS, *NOT_PROVIDED]:
        parent, _, leaf = assay_path(path).rpartition(".")
        exported = getattr(importlib.import_module(parent), "__all__", ())
        assert leaf not in exported, f"{assay_path(path)} would hide {parent}.{leaf}"
