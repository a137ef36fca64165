"""Parsing conditions: the tree each construct gives, precedence, the errors (position and what
was expected, in words), the type checks, and the limits (hostile sizes refused before a deep
tree exists, never a RecursionError)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from assay.errors import UsageError
from assay.platform.server.conditions import (
    ConditionError,
    Field,
    Limits,
    format_condition,
    matches,
    parse_condition,
)
from assay.platform.server.conditions.tree import (
    MATCH_ALL,
    And,
    Between,
    Compare,
    HasTag,
    InList,
    IsNull,
    Like,
    Not,
    Now,
    Or,
)

UTC = timezone.utc
INPUT, MODEL = Field("input"), Field("model")


def refused(text: str, **limits: int) -> ConditionError:
    with pytest.raises(ConditionError) as caught:
        parse_condition(text, limits=Limits(**limits)) if limits else parse_condition(text)
    return caught.value


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("input = 'a'", Compare(INPUT, "=", "a")),
        ("input <> 'a'", Compare(INPUT, "!=", "a")),
        ("input = 'it''s'", Compare(INPUT, "=", "it's")),
        ("latency_ms >= -2.5e3", Compare(Field("latency_ms"), ">=", -2500.0)),
        ("edited = TRUE", Compare(Field("edited"), "=", True)),
        ("model in ('a', 'b')", InList(MODEL, ("a", "b"))),
        ("model NOT IN ('a')", Not(InList(MODEL, ("a",)))),
        ("tokens BETWEEN 1 AND 3", Between(Field("tokens"), 1.0, 3.0)),
        ("input LIKE 'a%'", Like(INPUT, "a%")),
        ("input NOT ILIKE 'a_'", Not(Like(INPUT, "a_", case_insensitive=True))),
        ("error IS NULL", IsNull(Field("error"))),
        ("error is not null", Not(IsNull(Field("error")))),
        ("'x' IN tags", HasTag(Field("tags"), "x")),
        ("tags CONTAINS 'x'", HasTag(Field("tags"), "x")),
        ("tags NOT CONTAINS 'x'", Not(HasTag(Field("tags"), "x"))),
        ("'x' NOT IN tags", Not(HasTag(Field("tags"), "x"))),
        ("metadata.user.tier = 'gold'", Compare(Field("metadata", ("user", "tier")), "=", "gold")),
        ('metadata."a b"."in" = 1', Compare(Field("metadata", ("a b", "in")), "=", 1.0)),
        (
            'score."answer relevancy" < 0.5',
            Compare(Field("score", ("answer relevancy",)), "<", 0.5),
        ),
        ("label.ok = true", Compare(Field("label", ("ok",)), "=", True)),
        ("created_at > now() - 7d", Compare(Field("created_at"), ">", Now(timedelta(days=-7)))),
        ("created_at < now() + 2h", Compare(Field("created_at"), "<", Now(timedelta(hours=2)))),
        ("created_at < now()", Compare(Field("created_at"), "<", Now())),
        (
            "created_at >= '2026-01-31T12:00:00+02:00'",
            Compare(Field("created_at"), ">=", datetime(2026, 1, 31, 10, tzinfo=UTC)),
        ),
        (
            "created_at >= '2026-01-31'",
            Compare(Field("created_at"), ">=", datetime(2026, 1, 31, tzinfo=UTC)),
        ),
        ("", MATCH_ALL),
        ("  \n ", MATCH_ALL),
    ],
)
def test_each_construct_gives_its_tree(text: str, tree: object) -> None:
    assert parse_condition(text) == tree
    assert parse_condition(format_condition(tree)) == tree  # type: ignore[arg-type]


def test_and_binds_tighter_than_or_and_not_tighter_than_and() -> None:
    a, b, c = (Compare(INPUT, "=", x) for x in "abc")
    assert parse_condition("input = 'a' OR input = 'b' AND input = 'c'") == Or((a, And((b, c))))
    assert parse_condition("NOT input = 'a' AND input = 'b'") == And((Not(a), b))
    assert parse_condition("NOT (input = 'a' AND input = 'b')") == Not(And((a, b)))
    assert parse_condition("(input = 'a' OR input = 'b') AND input = 'c'") == And((Or((a, b)), c))
    assert parse_condition("input = 'a' AND input = 'b' AND input = 'c'") == And((a, b, c))


def test_keywords_ignore_case_and_field_names_do_not() -> None:
    assert parse_condition("input = 'a' aNd NoT model iS nUlL") == And(
        (Compare(INPUT, "=", "a"), Not(IsNull(MODEL)))
    )
    assert "unknown field 'Input'" in str(refused("Input = 'a'"))


def test_a_syntax_error_names_line_column_and_what_was_expected() -> None:
    error = refused("input = 'a'\n  AND model =")
    assert (error.line, error.column, error.offset) == (2, 14, 25)
    assert error.expected == ("a value ('text', a number, true, false, null or now())",)
    assert str(error) == (
        "condition, line 2, column 14: expected a value ('text', a number, true, false, null or"
        " now()), found the end of the condition"
    )
    error = refused("input 'a'")
    assert (error.line, error.column) == (1, 7)
    assert "a comparison (=, !=, <, <=, >, >=)" in error.expected and "LIKE" in error.expected
    assert "found the text 'a'" in str(error)


def test_an_unexpected_character_is_named() -> None:
    error = refused("input = 'a'; DROP TABLE traces")
    assert (error.column, error.offset) == (12, 11)
    assert "unexpected character ';'" in str(error) and "statement separators" in str(error)
    assert "comments" in str(refused("input = 'a' /* x */"))
    assert "single quotes" in str(refused('input = "a"'))


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("foo = 1", 1, "unknown field 'foo'; the fields are: id, input"),
        ("metadata = 'x'", 1, "metadata needs a key"),
        ("score.a.b > 1", 1, "takes exactly one criterion name"),
        ("input.x = 'a'", 7, "input has no keys below it"),
        ('metadata."0" = 1', 10, "looks like a list position"),
        ('metadata." -1 " = 1', 10, "looks like a list position"),
        ("input = 5", 9, "input holds text: compare it with a 'quoted string'"),
        ("latency_ms = '5'", 14, "latency_ms holds a number: compare it with a number"),
        ("latency_ms LIKE '5%'", 1, "LIKE or ILIKE does not apply"),
        ("edited > true", 8, "edited holds true or false; <, <=, > or >= does not apply"),
        ("edited BETWEEN true AND false", 1, "BETWEEN does not apply"),
        ("model = null", 9, "compare with null as model IS NULL"),
        ("tags = 'x'", 6, "tags can only be tested with 'x' IN tags"),
        ("tags IS NULL", 1, "tags can only be tested"),
        ("'x' IN model", 8, "only tags take 'x' IN"),
        ("model CONTAINS 'x'", 1, "only tags take"),
        ("created_at > 'yesterday'", 14, "is not an ISO date"),
        ("created_at > 5", 14, "a date such as '2026-01-31' or now() - 7d"),
        ("latency_ms > now()", 14, "compare it with a number"),
        ("metadata.a > true", 14, "true and false have no order"),
        ("metadata.a BETWEEN 1 AND 'z'", 26, "both ends of BETWEEN"),
        ("latency_ms > 1e999", 14, "too large"),
        ("created_at > now() - 99999d", 22, "at most 36500d"),
        ("input LIKE 'a\\'", 12, "lone backslash"),
        ("input = 'a\x00'", 11, "is not allowed"),
    ],
)
def test_type_and_field_errors_point_at_the_culprit(text: str, column: int, words: str) -> None:
    error = refused(text)
    assert words in str(error)
    assert error.column == column


def test_condition_error_is_a_usage_error() -> None:
    error = refused("nope")
    assert isinstance(error, UsageError) and isinstance(error, ValueError)
    with pytest.raises(ConditionError, match="a condition is text"):
        parse_condition(42)  # type: ignore[arg-type]


def test_length_is_checked_first() -> None:
    error = refused("input = '" + "a" * 5000 + "'")
    assert "5010 characters long; the limit is 4000" in str(error)


def test_ten_thousand_nested_parentheses_stop_at_the_depth_limit() -> None:
    text = "(" * 10_000 + "input = 'a'" + ")" * 10_000
    error = refused(text, max_length=100_000, max_depth=24)
    # the lexer stopped at the 25th parenthesis: nothing past it was read or built
    assert error.offset == 24 and "nest deeper than the limit of 24" in str(error)
    assert "the limit is 4000" in str(refused(text))  # default limits: the length refuses it


def test_a_long_not_chain_is_refused_without_recursion_error() -> None:
    text = "NOT " * 20_000 + "input = 'a'"
    error = refused(text, max_length=200_000, max_depth=24)
    assert "nests deeper than the limit of 24" in str(error)
    assert error.offset == 24 * 4  # the 25th NOT


def test_deep_but_allowed_nesting_parses() -> None:
    tree = parse_condition("(" * 20 + "NOT input = 'a'" + ")" * 20)
    assert tree == Not(Compare(INPUT, "=", "a"))


def test_the_number_of_terms_is_limited() -> None:
    text = " OR ".join(["input = 'a'"] * 65)
    error = refused(text)
    assert "more than 64 comparisons" in str(error) and error.offset == text.rindex("=")
    assert len(parse_condition(" OR ".join(["input = 'a'"] * 64)).items) == 64  # type: ignore[union-attr]


def test_an_in_list_is_limited() -> None:
    error = refused("model IN (" + ", ".join(["'m'"] * 101) + ")")
    assert "at most 100 values" in str(error)


def test_matches_reads_a_record() -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    record = {
        "input": "Hello",
        "created_at": now - timedelta(days=1),
        "metadata": {"user": {"tier": "gold"}, "n": 5},
        "scores": {"q": 0.9},
        "labels": {"ok": True},
        "tags": ["prod"],
    }
    yes = [
        "input ILIKE 'h%' AND created_at > now() - 2d",
        "metadata.user.tier = 'gold' AND metadata.n = 5 AND NOT metadata.n = '5'",
        "score.q BETWEEN 0.5 AND 1 AND label.ok = true AND 'prod' IN tags",
        "NOT model = 'x' AND model IS NULL AND score.other IS NULL",
        "",
    ]
    no = ["input LIKE 'h%'", "created_at > now() - 12h", "model != 'x'", "label.ok = 1"]
    for text in yes:
        assert matches(parse_condition(text), record, now=now), text
    for text in no:
        assert not matches(parse_condition(text), record, now=now), text


def test_matches_uses_the_current_time_by_default() -> None:
    tree = parse_condition("created_at > now() - 1h")
    assert matches(tree, {"created_at": datetime.now(UTC)})
    assert not matches(tree, {"created_at": datetime.now(UTC) - timedelta(hours=2)})


def test_compiling_for_another_database_is_refused_by_name() -> None:
    from sqlalchemy import column, table
    from sqlalchemy.dialects import mysql
    from sqlalchemy.exc import CompileError

    from assay.platform.server.conditions import ResolvedField, compile_condition

    meta = table("t", column("meta"))
    expr = compile_condition(
        parse_condition("metadata.a = 1"), lambda f: ResolvedField(meta.c.meta, f.path)
    )
    with pytest.raises(CompileError, match="SQLite and PostgreSQL only, not mysql"):
        expr.compile(dialect=mysql.dialect())
