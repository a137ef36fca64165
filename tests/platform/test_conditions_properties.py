"""Property tests of the condition language (Hypothesis): random conditions over random trace
rows select the same ids on SQLite, on PostgreSQL and in the oracle; every tree survives being
written out and parsed back; fuzzed text only ever gives a tree or a ConditionError.

The default run keeps example counts small; `pytest -m slow` runs the same properties longer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from assay.platform.server.conditions import (
    ConditionError,
    Field,
    format_condition,
    parse_condition,
)
from assay.platform.server.conditions.tree import (
    And,
    Between,
    Compare,
    Condition,
    HasTag,
    InList,
    IsNull,
    Like,
    Not,
    Now,
    Or,
)
from tests.platform.test_conditions_tables import (
    NOW,
    insert,
    oracle_ids,
    postgres_engine,
    selected_ids,
    sqlite_engine,
)

# Small vocabularies so random conditions actually hit random rows; the characters include
# LIKE's and GLOB's wildcards, quotes, case pairs inside and outside ASCII.
WORDS = [
    "",
    "a",
    "A",
    "ab",
    "aB",
    "b",
    "%",
    "_",
    "*",
    "?",
    "[",
    "é",
    "É",
    "Éa",
    "'",
    '"',
    "\\",
    "a b",
]
text_values = st.one_of(
    st.sampled_from(WORDS), st.sampled_from(WORDS), st.text(alphabet="aAbéÉ%_*[\\' ", max_size=4)
)
numbers = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 10.0, 1e6])
json_numbers = st.sampled_from([-1, 0, 1, 2, 10, 0.5, 2.5, 1e6])
booleans = st.booleans()
KEYS = ["a", "x y", "é"]
CRITERIA = ["q", "r"]
moments = st.integers(min_value=-20 * 24, max_value=2).map(lambda h: NOW + timedelta(hours=h))


# -- conditions ---------------------------------------------------------------------------------
# Literals come from the vocabularies above and from a pool of the values the example's rows
# hold, LIKE patterns from those values with letters case-flipped or turned into wildcards, so
# that most conditions select some rows and not others.
Pool = dict[Field, list[Any]]  # the values each field holds in the example's rows
EMPTY_POOL: Pool = {}


def _values(kind: str, seen: list[Any] = ()) -> st.SearchStrategy[Any]:
    base = {
        "text": text_values,
        "number": numbers,
        "boolean": booleans,
        "datetime": moments
        | st.integers(-30, 1).map(lambda d: Now(timedelta(days=d)))
        | st.integers(-48, 2).map(lambda h: Now(timedelta(hours=h))),
        "json": text_values | numbers | booleans,
    }[kind]
    return st.one_of(base, st.sampled_from(seen), st.sampled_from(seen)) if seen else base


def _pattern_from(text: str) -> st.SearchStrategy[str]:
    def spell(choices: list[str], tail: bool) -> str:
        out = []
        for char, choice in zip(text, choices, strict=True):
            if choice == "one":
                out.append("_")
            elif choice == "rest" and tail:
                out.append("%")
                break
            else:
                char = char.swapcase() if choice == "swap" else char
                out.append("\\" + char if char in "%_\\" else char)
        return "".join(out)

    steps = st.sampled_from(["keep", "keep", "swap", "one", "rest"])
    return st.builds(spell, st.lists(steps, min_size=len(text), max_size=len(text)), booleans)


def _patterns(seen: list[Any]) -> st.SearchStrategy[str]:
    piece = st.sampled_from(["a", "A", "b", "é", "É", "*", "?", "[", " ", "%", "_", "\\%", "\\_"])
    made = st.lists(piece, max_size=4).map("".join)
    texts = [value for value in seen if isinstance(value, str)]
    return made | st.sampled_from(texts).flatmap(_pattern_from) if texts else made


FIELDS: dict[str, list[Field]] = {
    "text": [Field(n) for n in ("id", "input", "output", "model", "error")],
    "number": [Field(n) for n in ("latency_ms", "tokens", "input_tokens", "output_tokens")]
    + [Field("score", (c,)) for c in CRITERIA],
    "datetime": [Field("created_at")],
    "boolean": [Field("edited")],
    "json": [Field("metadata", (k,)) for k in KEYS]
    + [Field("metadata", ("a", k)) for k in KEYS]
    + [Field("label", (c,)) for c in CRITERIA],
}


@st.composite
def predicates(draw: Any, pool: Pool) -> Condition:
    kind = draw(st.sampled_from([*FIELDS, "tags"]))
    if kind == "tags":
        return HasTag(Field("tags"), draw(_values("text", pool.get(Field("tags"), []))))
    ref = draw(st.sampled_from(FIELDS[kind]))
    seen = pool.get(ref, [])
    shapes = ["compare", "in", "null"]
    if kind != "boolean":
        shapes += ["between", "order"]
    if kind in ("text", "json"):
        shapes += ["like", "like"]
    shape = draw(st.sampled_from(shapes))
    if shape == "null":
        return IsNull(ref)
    if shape == "like":
        return Like(ref, draw(_patterns(seen)), draw(booleans))
    if shape == "in":
        return InList(ref, tuple(draw(st.lists(_values(kind, seen), min_size=1, max_size=3))))
    ordered = _values(kind, seen)
    if kind == "json":  # ordered JSON comparisons take numbers or text, both ends alike
        numeric = draw(booleans)
        ordered = _values(
            "number" if numeric else "text",
            [v for v in seen if isinstance(v, float if numeric else str)],
        )
    if shape == "between":
        return Between(ref, draw(ordered), draw(ordered))
    if shape == "order":
        return Compare(ref, draw(st.sampled_from(["<", "<=", ">", ">="])), draw(ordered))
    return Compare(ref, draw(st.sampled_from(["=", "!="])), draw(_values(kind, seen)))


def conditions_over(pool: Pool) -> st.SearchStrategy[Condition]:
    return st.recursive(
        predicates(pool),
        lambda inner: st.one_of(
            inner.map(Not),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: And(tuple(xs))),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: Or(tuple(xs))),
        ),
        max_leaves=6,
    )


conditions = conditions_over(EMPTY_POOL)


COLUMNS = {"input": "input_text", "output": "output_text", "metadata": "meta"}


def pool_of(data: list[dict[str, Any]]) -> Pool:
    pool: Pool = {}

    def add(ref: Field, value: Any) -> None:
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, (str, float, bool)) or hasattr(value, "tzinfo"):
            pool.setdefault(ref, [])
            if value not in pool[ref]:
                pool[ref].append(value)

    for row in data:
        for refs in FIELDS.values():
            for ref in refs:
                if ref.name in ("score", "label"):
                    for criterion, value, _at in row[ref.name + "s"]:
                        if criterion == ref.path[0]:
                            add(ref, value)
                    continue
                value = row.get(COLUMNS.get(ref.name, ref.name))
                for key in ref.path:
                    value = value.get(key) if isinstance(value, dict) else None
                add(ref, value)
        for tag in row["tags"]:
            add(Field("tags"), tag)
    return pool


# -- rows -----------------------------------------------------------------------------------------
def optional(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | values


@st.composite
def rows(draw: Any) -> list[dict[str, Any]]:
    """2-6 rows whose text comes mostly from a small palette and its case-swapped spellings, so
    rows share values and LIKE / ILIKE / = can tell them apart."""
    palette = st.sampled_from(draw(st.lists(text_values, min_size=1, max_size=3)))
    texts = st.one_of(palette, palette, palette.map(str.swapcase), text_values)
    scalars = st.none() | booleans | json_numbers | texts
    json_value = st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
        ),
        max_leaves=5,
    )
    events = st.tuples(st.sampled_from(CRITERIA), moments)
    out = []
    for index in range(draw(st.integers(2, 6))):
        out.append(
            {
                "id": f"t{index}-" + draw(st.sampled_from(["a", "A", "é"])),
                "input_text": draw(texts),
                "output_text": draw(texts),
                "model": draw(optional(texts)),
                "error": draw(optional(texts)),
                "created_at": draw(moments),
                "latency_ms": draw(optional(numbers)),
                "tokens": draw(optional(st.integers(-1, 10))),
                "input_tokens": draw(optional(st.integers(0, 3))),
                "output_tokens": draw(optional(st.integers(0, 3))),
                "edited": draw(booleans),
                "tags": draw(st.lists(texts, max_size=3)),
                "meta": draw(st.dictionaries(st.sampled_from(KEYS), json_value, max_size=4)),
                "scores": [
                    (c, draw(optional(numbers)), at) for c, at in draw(st.lists(events, max_size=3))
                ],
                "labels": [
                    (c, draw(booleans | json_numbers | texts), at)
                    for c, at in draw(st.lists(events, max_size=3))
                ],
            }
        )
    return out


# -- the properties -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def engines(pg_url: str, tmp_path_factory: Any) -> Iterator[dict[str, Engine]]:
    made = {
        "sqlite": sqlite_engine(tmp_path_factory.mktemp("conditions-properties") / "c.sqlite"),
        "postgresql": postgres_engine(pg_url),
    }
    yield made
    for engine in made.values():
        engine.dispose()


def _every_node(trees: list[Condition]) -> list[Condition]:
    """The trees and all their subtrees, once each: a disagreement inside an AND that another
    term makes false would otherwise go unseen."""
    out: list[Condition] = []
    stack = list(trees)
    while stack:
        node = stack.pop()
        if node not in out:
            out.append(node)
        if isinstance(node, (And, Or)):
            stack.extend(node.items)
        elif isinstance(node, Not):
            stack.append(node.item)
    return out


def _same_ids_everywhere(
    engines: dict[str, Engine], data: list[dict[str, Any]], trees: list[Condition]
) -> None:
    trees = _every_node(trees)
    found: dict[str, list[set[str]]] = {}
    for name, engine in engines.items():
        with engine.connect() as connection:
            transaction = connection.begin()
            insert(connection, data)
            found[name] = [selected_ids(connection, tree, NOW) for tree in trees]
            transaction.rollback()
    for index, tree in enumerate(trees):
        expected = oracle_ids(data, tree, NOW)
        text = format_condition(tree)
        assert found["sqlite"][index] == expected, f"SQLite vs oracle on {text!r}"
        assert found["postgresql"][index] == expected, f"PostgreSQL vs oracle on {text!r}"
        event(
            ["no row", "one row", "some rows"][min(len(expected), 2)]
            if len(expected) < len(data)
            else "every row"
        )


DB_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=100, **DB_SETTINGS)
@given(data=rows(), draw=st.data())
def test_sqlite_postgresql_and_the_oracle_select_the_same_traces(
    engines: dict[str, Engine], data: list[dict[str, Any]], draw: st.DataObject
) -> None:
    trees = draw.draw(st.lists(conditions_over(pool_of(data)), min_size=1, max_size=5))
    _same_ids_everywhere(engines, data, trees)


@pytest.mark.slow
@settings(max_examples=1500, **DB_SETTINGS)
@given(data=rows(), draw=st.data())
def test_sqlite_postgresql_and_the_oracle_agree_at_length(
    engines: dict[str, Engine], data: list[dict[str, Any]], draw: st.DataObject
) -> None:
    trees = draw.draw(st.lists(conditions_over(pool_of(data)), min_size=1, max_size=8))
    _same_ids_everywhere(engines, data, trees)


@settings(max_examples=200, deadline=None)
@given(tree=conditions)
def test_a_written_out_tree_parses_back_to_itself(tree: Condition) -> None:
    assert parse_condition(format_condition(tree)) == tree


# Fuzzing: raw characters, and soups of the language's own pieces (closer to valid input).
PIECES = [
    "input", "metadata.a", "metadata.\"x y\"", "score.q", "label.q", "tags", "created_at",
    "edited", "latency_ms", "foo", "=", "!=", "<>", "<", ">=", "AND", "OR", "NOT", "IN", "LIKE",
    "ILIKE", "BETWEEN", "IS", "NULL", "CONTAINS", "true", "false", "now()", "- 7d", "7d", "(",
    ")", ",", "'a'", "'", "''", "1", "-1", "1e999", "2.5", "'2026-01-01'", "'not a date'",
    ";", "--", "/*", "*/", "\"", "\\", ".", "\n", "\x00", "\ud800", "é", "SELECT", "DROP",
]  # fmt: skip


def _parses_or_refuses(text: str) -> None:
    try:
        tree = parse_condition(text)
    except ConditionError as exc:
        assert exc.line >= 1 and exc.column >= 1 and 0 <= exc.offset <= len(text)
        assert str(exc).startswith(f"condition, line {exc.line}, column {exc.column}")
    else:
        assert parse_condition(format_condition(tree)) == tree


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_fuzzed_text_gives_a_tree_or_a_condition_error(text: str) -> None:
    _parses_or_refuses(text)


@settings(max_examples=400, deadline=None)
@given(words=st.lists(st.sampled_from(PIECES), max_size=14))
def test_fuzzed_pieces_give_a_tree_or_a_condition_error(words: list[str]) -> None:
    _parses_or_refuses(" ".join(words))


@pytest.mark.slow
@settings(max_examples=20_000, deadline=None)
@given(words=st.lists(st.sampled_from(PIECES), max_size=30))
def test_fuzzed_pieces_at_length(words: list[str]) -> None:
    _parses_or_refuses(" ".join(words))
