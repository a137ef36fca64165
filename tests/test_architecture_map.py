"""docs/architecture.md's map is the import graph between the rooms of `src/assay`, as it is.

The map's arrows block (the fenced block that opens with `# rooms and arrows`) names the core's
layers in order, the rooms beside them, the surfaces and the Ragas room, then every arrow that
leaves a surface or the Ragas room for another surface or the Ragas room (`a -> b c`: a module
of `a` imports `b` and `c`), and every call-time import by name from a core room to a surface
(`a ~> b`). These tests compute the real graph from the code (module-level and function-level
imports, and `importlib.import_module("assay....")` with a literal name) and fail when

- code imports a surface from another surface (or the Ragas room) along an arrow not drawn;
- a drawn arrow no longer exists;
- a core room imports a surface or the Ragas room (`import` statements: never; by name at call
  time: only where drawn with `~>`), or a layer imports a layer drawn after it;
- a room exists that the map does not place.

Attribution: a module's room is the first part of its path under `src/assay` (`cli/app.py` is
`cli`, `evaluator.py` is `evaluator`). A Ragas door (a module whose only assay import is
`assay.compat.ragas.paths`, like `assay/utils.py` or `metrics/_aspect_critic.py`) belongs to the
Ragas room wherever it sits. `from assay import X` counts as importing the room `X` comes from; a
bare `import assay` reads the public names (allowed to surfaces, never to the core). The package's
own `__init__.py` (the public names) and `__main__.py` (runs the CLI) are the front door, not a
room.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "assay"
DOC = REPO / "docs" / "architecture.md"
DOOR = "assay.compat.ragas.paths"
FRONT = {"__init__", "__main__"}
HEADER = "# rooms and arrows"


# ---------------------------------------------------------------- the map


@dataclass
class Map:
    layers: list[str] = field(default_factory=list)
    beside: set[str] = field(default_factory=set)
    surfaces: set[str] = field(default_factory=set)
    ragas: set[str] = field(default_factory=set)
    arrows: set[tuple[str, str]] = field(default_factory=set)
    by_name: set[tuple[str, str]] = field(default_factory=set)

    @property
    def core(self) -> set[str]:
        return set(self.layers) | self.beside

    @property
    def rooms(self) -> set[str]:
        return self.core | self.surfaces | self.ragas


def parse_map(text: str) -> Map:
    """The arrows block of `text`: `key: rooms` lines, then `a -> b c` / `a ~> b` lines; `#`
    starts a comment. A line that is neither is an error, so a typo cannot drop an arrow."""
    blocks = re.findall(r"^```text\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    chosen = [b for b in blocks if b.startswith(HEADER)]
    if len(chosen) != 1:
        raise ValueError(f"expected one ```text block opening with {HEADER!r}, found {len(chosen)}")
    found = Map()
    for number, raw in enumerate(chosen[0].splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if match := re.fullmatch(r"(layers|beside|surfaces|ragas):\s*(.+)", line):
            key, names = match[1], match[2].split()
            if key == "layers":
                found.layers = names
            else:
                getattr(found, key).update(names)
        elif match := re.fullmatch(r"([\w.]+)\s*(->|~>)\s*(.+)", line):
            target = found.arrows if match[2] == "->" else found.by_name
            target.update((match[1], b) for b in match[3].split())
        else:
            raise ValueError(f"arrows block line {number}: cannot read {raw!r}")
    return found


# ---------------------------------------------------------------- the code


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    by_name: bool  # importlib.import_module("assay....") rather than an import statement


def _top(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "assay" or len(parts) < 2:
        return None
    return parts[1]


def _facade_names(src: Path) -> dict[str, str]:
    """Which room each public name of `assay/__init__.py` comes from: explicit imports from the
    file, star imports from the room's `__all__`."""
    names: dict[str, str] = {}
    for node in ast.parse((src / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and (room := _top(node.module)):
            for alias in node.names:
                if alias.name == "*":
                    module = importlib.import_module(node.module)
                    names.update({name: room for name in module.__all__})
                else:
                    names[alias.asname or alias.name] = room
    return names


def _tree(path: Path) -> ast.Module:
    return _parse(path.read_text(encoding="utf-8"))


@functools.cache
def _parse(text: str) -> ast.Module:
    """One parse per text (the graph and the room list both read every file)."""
    return ast.parse(text)


def _imported(tree: ast.AST, facade: dict[str, str]) -> tuple[set[str], set[str], bool]:
    """(modules imported by statements, modules imported by name, whether `import assay` is
    there); `from assay import X` gives the room of X."""
    statements: set[str] = set()
    named: set[str] = set()
    bare = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "assay":
                    bare = True
                statements.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError("relative import: the map's check expects absolute imports")
            if node.module == "assay":
                for alias in node.names:
                    room = facade.get(alias.name)
                    if room is None:
                        bare = True  # a name the front door defines itself
                    else:
                        statements.add(f"assay.{room}")
            elif node.module:
                statements.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            named.add(node.args[0].value)
    return statements, named, bare


# Every import statement of a room starts a line with one of these, so the rooms a file may
# import are read from its text first, and only a file that may show a pair of rooms not yet
# confirmed is parsed (parsing all ~600 files costs ~2 s). A match inside a string (a docstring's
# example) is no import: the parse decides.
_ROOM_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+assay\.(\w+)", re.MULTILINE)
_PARSE_ALWAYS = re.compile(
    r"^[ \t]*(?:from[ \t]+assay[ \t]+import|import[ \t]+assay\b(?!\.))|import_module\(",
    re.MULTILINE,
)


def import_graph(src: Path, facade: dict[str, str]) -> tuple[dict[Edge, str], dict[str, str]]:
    """Every edge between two rooms of the package at `src`, each with one file that draws it,
    and the rooms whose modules `import assay` (room -> a file)."""
    edges: dict[Edge, str] = {}
    bare_users: dict[str, str] = {}
    rooms = {p.name.removesuffix(".py") for p in src.iterdir() if p.name != "__pycache__"}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        room = rel.parts[0].removesuffix(".py")
        if room in FRONT:
            continue
        text = path.read_text(encoding="utf-8")
        may_import = set(_ROOM_IMPORT.findall(text))
        confirmed = {(e.source, e.target) for e in edges}
        settled = all(t == room or t not in rooms or (room, t) in confirmed for t in may_import)
        if settled and may_import != {"compat"} and not _PARSE_ALWAYS.search(text):
            continue
        statements, named, bare = _imported(_parse(text), facade)
        if {m for m in statements | named if _top(m)} == {DOOR}:
            room = "compat"
        if bare:
            bare_users.setdefault(room, rel.as_posix())
        for module, by_name in [(m, False) for m in statements] + [(m, True) for m in named]:
            target = _top(module)
            if target and target != room and target in rooms and target not in FRONT:
                edges.setdefault(Edge(room, target, by_name), rel.as_posix())
    return edges, bare_users


def _is_door(path: Path) -> bool:
    statements, named, _ = _imported(_tree(path), {})
    return {m for m in statements | named if _top(m)} == {DOOR}


def code_rooms(src: Path) -> set[str]:
    """The rooms that hold code of their own: a top-level module or folder made only of Ragas
    doors (`assay/utils.py`, `assay/llms/`) is part of the Ragas room."""
    found = set()
    for path in src.iterdir():
        if path.name == "__pycache__" or path.name.removesuffix(".py") in FRONT:
            continue
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path] * (path.suffix == ".py")
        if files and not all(_is_door(file) for file in files):
            found.add(path.name.removesuffix(".py"))
    return found


# ---------------------------------------------------------------- the checks


def check(the_map: Map, edges: dict[Edge, str], bare: dict[str, str], rooms: set[str]) -> list[str]:
    """Every way the map and the code disagree, one line each (empty: they agree)."""
    wrong: list[str] = []
    if missing := sorted(rooms - the_map.rooms):
        wrong.append(f"rooms the map does not place: {missing}")
    if gone := sorted(the_map.rooms - rooms):
        wrong.append(f"rooms on the map that hold no code: {gone}")
    above = the_map.surfaces | the_map.ragas
    order = {room: i for i, room in enumerate(the_map.layers)}
    seen_arrows: set[tuple[str, str]] = set()
    seen_by_name: set[tuple[str, str]] = set()
    for edge, where in sorted(edges.items(), key=lambda item: str(item[0])):
        pair = (edge.source, edge.target)
        if edge.source in the_map.core and edge.target in above:
            if not edge.by_name:
                wrong.append(
                    f"the core imports a surface: {edge.source} -> {edge.target} ({where})"
                )
            elif pair not in the_map.by_name:
                wrong.append(f"not drawn: {edge.source} ~> {edge.target} ({where})")
            seen_by_name.add(pair)
        elif edge.source in above and edge.target in above:
            seen_arrows.add(pair)
            if pair not in the_map.arrows:
                wrong.append(f"not drawn: {edge.source} -> {edge.target} ({where})")
        elif order.get(edge.source, -1) < order.get(edge.target, -1) and edge.source in order:
            wrong.append(f"a layer imports a later layer: {edge.source} -> {edge.target} ({where})")
    for source, where in sorted(bare.items()):
        if source in the_map.core:
            wrong.append(f"the core imports the public names (`import assay`): {where}")
    wrong += [
        f"drawn but not in the code: {a} -> {b}" for a, b in sorted(the_map.arrows - seen_arrows)
    ]
    wrong += [
        f"drawn but not in the code: {a} ~> {b}" for a, b in sorted(the_map.by_name - seen_by_name)
    ]
    return wrong


@pytest.fixture(scope="module")
def the_map() -> Map:
    return parse_map(DOC.read_text(encoding="utf-8"))


def test_the_map_is_the_import_graph(the_map):
    edges, bare = import_graph(SRC, _facade_names(SRC))
    assert check(the_map, edges, bare, code_rooms(SRC)) == []


def test_the_map_names_each_room_once(the_map):
    named = [*the_map.layers, *the_map.beside, *the_map.surfaces, *the_map.ragas]
    assert len(named) == len(set(named))


LONGEST_PARAGRAPH = 150  # words (#40, 8): one short section per room, detail on the topic pages


def paragraphs(text: str) -> list[str]:
    """The prose paragraphs of a page: fenced blocks left out, each heading and list item apart."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    found: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text):
        current: list[str] = []
        for line in block.splitlines():
            if re.match(r"(#+ |- |\d+\. )", line) and current:
                found.append(" ".join(current))
                current = []
            current.append(line)
            if line.startswith("#"):  # a heading is a line of its own
                found.append(" ".join(current))
                current = []
        found.append(" ".join(current))
    return [p for p in found if p.strip()]


def test_no_paragraph_of_the_architecture_page_is_long():
    long = [
        f"{len(p.split())} words: {p[:80]}"
        for p in paragraphs(DOC.read_text(encoding="utf-8"))
        if len(p.split()) > LONGEST_PARAGRAPH
    ]
    assert long == [], "split the paragraph, or move its detail to the room's own page"


def test_paragraphs_are_split_at_blank_lines_headings_and_list_items():
    text = "# T\nintro\n\none\ntwo\n- a\n- b\n\n```text\ncode\n```\n"
    assert paragraphs(text) == ["# T", "intro", "one two", "- a", "- b"]


# ---------------------------------------------------------------- the checker itself


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "assay"
    for name, text in {"__init__.py": "", **files}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    return src


SMALL_MAP = """
```text
# rooms and arrows
layers: schema metrics
beside: errors
surfaces: cli report
ragas: compat
cli -> report   # a comment
metrics ~> report
```
"""


def test_the_checker_finds_each_kind_of_disagreement(tmp_path):
    the_map = parse_map(SMALL_MAP)
    assert the_map.arrows == {("cli", "report")} and the_map.by_name == {("metrics", "report")}
    src = _package(
        tmp_path,
        {
            "schema/__init__.py": "def f():\n    import assay.metrics.x\n",  # layer upward
            "metrics/__init__.py": "import importlib\nimportlib.import_module('assay.report')\n",
            "errors.py": "import assay\n",  # the core reading the public names
            "cli/__init__.py": "from assay.errors import E\n",  # cli -> report is gone
            "cli/doc.py": '"""Use it so:\nfrom assay.report import r\n"""\n',  # no import
            "report/__init__.py": "def g():\n    from assay.cli.app import main\n",  # undrawn
            "compat/ragas/paths.py": "",
            "utils.py": "from assay.compat.ragas.paths import reexport\n",  # a door
            "extra/__init__.py": "",
        },
    )
    edges, bare = import_graph(src, {})
    rooms = code_rooms(src)
    assert "utils" not in rooms and "extra" in rooms
    assert check(the_map, edges, bare, rooms) == [
        "rooms the map does not place: ['extra']",
        "not drawn: report -> cli (report/__init__.py)",
        "a layer imports a later layer: schema -> metrics (schema/__init__.py)",
        "the core imports the public names (`import assay`): errors.py",
        "drawn but not in the code: cli -> report",
    ]
    (src / "metrics" / "__init__.py").write_text("from assay.report import r\n", encoding="utf-8")
    edges, bare = import_graph(src, {})
    assert "the core imports a surface: metrics -> report (metrics/__init__.py)" in check(
        the_map, edges, bare, rooms
    )


def test_the_map_parser_refuses_a_line_it_cannot_read():
    with pytest.raises(ValueError, match="line 2"):
        parse_map("```text\n# rooms and arrows\ncli => report\n```\n")
