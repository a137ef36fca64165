"""Every query of a project's tables is built in `storage/`, whose repositories apply the project
filter once (`ProjectScoped._select` / `_columns`). This test parses every other server module
and fails on a query of a resource table (a table with a `project_id`) built there: `select`,
`update`, `delete`, `insert`, `session.query`, `session.get`, a repository's private `_select` /
`_columns`, or raw SQL text naming a resource table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import assay.platform.server as server
from assay.platform.server.storage import models

ROOT = Path(server.__file__).parent
RESOURCES = {
    mapper.class_.__name__: mapper.class_.__tablename__
    for mapper in models.Base.registry.mappers
    if "project_id" in mapper.columns
}
QUERY_BUILDERS = {"select", "update", "delete", "insert", "pg_insert", "sqlite_insert"}
SESSION_CALLS = {"query", "get"}
REPO_PRIVATES = {"_select", "_columns"}

# Outside storage, on purpose (each reads across projects by design, never for one project):
ALLOWED = {
    # the worker claims the oldest job of any project; the claim then names its project
    "jobs/claims.py": {"Job", "Experiment"},
    # a key's id is looked up before anyone knows its project: authentication tells the project
    "auth/keys.py": {"ApiKey"},
    # a signed-in person's memberships are of every project they belong to
    "auth/users.py": {"ProjectMember"},
}


def _resource_names(tree: ast.AST) -> dict[str, str]:
    """Local names bound to a resource model (`T = models.LoggedTrace`, tuple forms too)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets[0]
            pairs = (
                zip(targets.elts, node.value.elts, strict=False)
                if isinstance(targets, ast.Tuple) and isinstance(node.value, ast.Tuple)
                else [(targets, node.value)]
            )
            for target, value in pairs:
                model = _model_of(value, {})
                if isinstance(target, ast.Name) and model:
                    names[target.id] = model
    return names


def _model_of(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr in RESOURCES:
        return node.attr  # models.X, or models.X.column
    if isinstance(node, ast.Attribute):
        return _model_of(node.value, aliases)  # X.column
    if isinstance(node, ast.Name):
        return aliases.get(node.id) or (node.id if node.id in RESOURCES else None)
    return None


def _models_in(nodes: list[ast.AST], aliases: dict[str, str]) -> set[str]:
    found = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, (ast.Attribute, ast.Name)) and (m := _model_of(node, aliases)):
                found.add(m)
    return found


def queries_outside_storage(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = _resource_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        hits: set[str] = set()
        if name in QUERY_BUILDERS or name in REPO_PRIVATES:
            hits = _models_in(node.args, aliases)
        elif name in SESSION_CALLS and isinstance(func, ast.Attribute) and node.args:
            hits = _models_in(node.args[:1], aliases)
        elif name == "text" and node.args and isinstance(node.args[0], ast.Constant):
            sql = str(node.args[0].value).lower()
            hits = {m for m, table in RESOURCES.items() if re.search(rf"\b{table}\b", sql)}
        if name in REPO_PRIVATES:
            hits.add(f"repository private {name}")
        for hit in sorted(hits):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(...{hit}...)")
    return found


def _outside_storage() -> list[Path]:
    return [
        p
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] != "storage" and "migrations" not in p.parts
    ]


def test_resource_tables_are_the_project_tables():
    assert {"LoggedTrace", "TraceScore", "ReviewQueue", "Criteria", "RagPipeline"} <= set(RESOURCES)
    assert "Project" not in RESOURCES and "User" not in RESOURCES


def test_the_detector_sees_each_kind_of_query(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "T = models.LoggedTrace\n"
        "session.scalars(select(T).where(T.project_id == 1))\n"
        "session.execute(delete(models.ReviewLock))\n"
        "session.get(models.TraceLabel, 3)\n"
        "session.query(models.Criteria)\n"
        "session.execute(update(models.Experiment).values(status='x'))\n"
        "repo._select(models.TraceScore)\n"
        "session.execute(text('SELECT * FROM logged_traces'))\n"
        "session.get(models.User, 1)\n"  # not a project's table
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        hits = queries_outside_storage(sample)
    finally:
        ROOT = saved
    assert len([h for h in hits if "private" not in h]) == 7, hits


def test_no_module_outside_storage_queries_a_project_table():
    problems = []
    for path in _outside_storage():
        allowed = ALLOWED.get(str(path.relative_to(ROOT)), set())
        problems += [q for q in queries_outside_storage(path) if q.split("...")[1] not in allowed]
    assert problems == [], "\n".join(problems)


def test_the_allowed_exceptions_are_still_needed():
    for rel, allowed in ALLOWED.items():
        hits = {q.split("...")[1] for q in queries_outside_storage(ROOT / rel)}
        assert allowed <= hits, (rel, allowed - hits)
