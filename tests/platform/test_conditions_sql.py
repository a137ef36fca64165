"""Conditions against real SQLite and PostgreSQL: hand-written cases with the ids worked out by
hand (not by the oracle, which must agree too), injection attempts that are refused or read as
plain data and leave every table unchanged, and the SQL carrying no text of the condition."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine

from assay.platform.server.conditions import ConditionError, compile_condition, parse_condition
from tests.platform.test_conditions_tables import (
    NOW,
    insert,
    oracle_ids,
    postgres_engine,
    resolve,
    selected_ids,
    snapshot,
    sqlite_engine,
)

UTC = timezone.utc
ROWS: list[dict[str, Any]] = [
    {
        "id": "t1",
        "input_text": "Hello World",
        "output_text": "ok",
        "model": "gpt-4o",
        "created_at": NOW - timedelta(days=2),
        "latency_ms": 120.5,
        "tokens": 30,
        "input_tokens": 10,
        "output_tokens": 20,
        "edited": False,
        "tags": ["prod", "vip"],
        "meta": {"user": {"tier": "gold"}, "n": 5, "s": "5", "flag": True, "é": {"ü": "x"}},
        "scores": [("q", 0.9, NOW)],
        "labels": [("q", "yes", NOW)],
    },
    {
        "id": "t2",
        "input_text": "hello world",
        "output_text": "",
        "model": "gpt-4o-mini",
        "created_at": NOW - timedelta(days=12),
        "latency_ms": 2000.0,
        "error": "timeout",
        "edited": True,
        "tags": ["dev"],
        "meta": {"user": {"tier": "silver"}, "n": "5", "flag": False, "x y": 1},
        "scores": [("q", 0.2, NOW - timedelta(hours=2)), ("q", 0.8, NOW - timedelta(hours=1))],
        "labels": [("q", 3, NOW)],
    },
    {
        "id": "t3",
        "input_text": "Ünïcode É",
        "output_text": "",
        "created_at": NOW - timedelta(hours=1),
        "tokens": 0,
        "edited": False,
        "tags": [],
        "meta": {},
        "labels": [("q", True, NOW)],
    },
    {
        "id": "t4",
        "input_text": "50% off_sale",
        "output_text": "a'; DROP TABLE traces; --",
        "model": "claude",
        "created_at": datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC),
        "latency_ms": 0.0,
        "edited": False,
        "tags": ["prod"],
        "meta": {"n": 7.5, "user": "plain"},
    },
    {
        "id": "t5",
        "input_text": "",
        "output_text": "",
        "model": "",
        "created_at": NOW - timedelta(days=400),
        "edited": False,
        "tags": [],
        "meta": {"user": None, "n": None},
    },
]
ALL = {"t1", "t2", "t3", "t4", "t5"}

CASES = [
    ("", ALL),
    ("input = 'Hello World'", {"t1"}),
    ("input LIKE 'hello%'", {"t2"}),
    ("input ILIKE 'HELLO%'", {"t1", "t2"}),
    ("input ILIKE 'ünïcode%'", set()),  # ILIKE folds A-Z only
    ("input ILIKE 'Ünïcode é'", set()),
    ("input ILIKE 'ÜNÏCODE É'", set()),
    ("input ILIKE 'ÜNïCODE É'", {"t3"}),
    ("input LIKE 'Ü_ïcode É'", {"t3"}),
    ("input LIKE '50\\% off\\_sale'", {"t4"}),
    ("input LIKE '50_ off%'", {"t4"}),
    ("input LIKE '5*'", set()),  # GLOB's own wildcards are literal
    ("input LIKE 'Hello [W]orld'", set()),
    ("input LIKE '%'", ALL),
    ("input ILIKE 'hello_world'", {"t1", "t2"}),
    ("model IN ('gpt-4o', 'claude')", {"t1", "t4"}),
    ("NOT model IN ('gpt-4o')", {"t2", "t3", "t4", "t5"}),
    ("model NOT IN ('gpt-4o')", {"t2", "t3", "t4", "t5"}),
    ("model != 'gpt-4o'", {"t2", "t4", "t5"}),  # NULL model: a comparison is false
    ("model <> 'gpt-4o'", {"t2", "t4", "t5"}),
    ("model IS NULL", {"t3"}),
    ("error IS NOT NULL", {"t2"}),
    ("latency_ms > 100", {"t1", "t2"}),
    ("latency_ms BETWEEN 0 AND 120.5", {"t1", "t4"}),
    ("latency_ms NOT BETWEEN 0 AND 120.5", {"t2", "t3", "t5"}),
    ("tokens = 0", {"t3"}),
    ("tokens IN (30, 0.5)", {"t1"}),
    ("tokens IN (0.4, 0.6, -0.4)", set()),  # never rounded to the column's integers
    ("tokens = 0.4 OR tokens BETWEEN 0.1 AND 0.9 OR tokens < 0.4 AND tokens > -0.4", {"t3"}),
    ("tokens >= -1 AND tokens < 30.5", {"t1", "t3"}),
    ("created_at > now() - 7d", {"t1", "t3"}),
    ("created_at > now() - 90m", {"t3"}),
    ("created_at < '2026-01-01'", {"t4", "t5"}),
    ("created_at >= '2026-01-01T00:59:59+01:00'", ALL - {"t5"}),
    ("created_at BETWEEN '2025-01-01' AND now() - 1w", {"t2", "t4", "t5"}),
    ("edited = true", {"t2"}),
    ("edited != true", {"t1", "t3", "t4", "t5"}),
    ("'prod' IN tags", {"t1", "t4"}),
    ("tags CONTAINS 'vip'", {"t1"}),
    ("'pro' IN tags", set()),
    ("NOT 'prod' IN tags", {"t2", "t3", "t5"}),
    ("'prod' NOT IN tags", {"t2", "t3", "t5"}),
    ("'gold' IN tags", set()),
    ("metadata.user.tier = 'gold'", {"t1"}),
    ("metadata.n = 5", {"t1"}),  # the string "5" is not the number 5
    ("metadata.n = '5'", {"t2"}),
    ("metadata.s = 5", set()),
    ("metadata.n > 6", {"t4"}),
    ("metadata.n BETWEEN 5 AND 7.5", {"t1", "t4"}),
    ("metadata.n IN (5, '5')", {"t1", "t2"}),
    ("metadata.flag = true", {"t1"}),
    ("metadata.flag = false", {"t2"}),
    ("metadata.flag != false", {"t1"}),
    ('metadata."x y" = 1', {"t2"}),
    ("metadata.user IS NULL", {"t3", "t5"}),
    ("metadata.user.tier IS NULL", {"t3", "t4", "t5"}),
    ("NOT metadata.user.tier = 'gold'", {"t2", "t3", "t4", "t5"}),
    ("metadata.user.tier > 'gold'", {"t2"}),
    ("metadata.user.tier ILIKE 'G%'", {"t1"}),
    ("metadata.user LIKE 'pl%'", {"t4"}),
    ("score.q > 0.5", {"t1", "t2"}),  # t2's latest score is 0.8
    ("score.q < 0.5", set()),
    ("score.q IS NULL", {"t3", "t4", "t5"}),
    ("score.missing IS NULL", ALL),
    ("label.q = 'yes'", {"t1"}),
    ("label.q = 3", {"t2"}),
    ("label.q = true", {"t3"}),
    ("label.q IN ('yes', 3)", {"t1", "t2"}),
    ("input > 'hello'", {"t2", "t3"}),  # code-point order
    ("input < 'a' AND input >= ''", {"t1", "t4", "t5"}),
    ("(input = 'Hello World' OR model = 'claude') AND NOT edited = true", {"t1", "t4"}),
    ("NOT (model = 'gpt-4o' OR score.q > 0.5)", {"t3", "t4", "t5"}),
    ("NOT NOT model = 'claude'", {"t4"}),
    ("id = 't3' or ID = 't4'", set()),  # field names are case-sensitive: refused below
]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Engine]:
    if request.param == "sqlite":
        made = sqlite_engine(tmp_path_factory.mktemp("conditions") / "c.sqlite")
    else:
        made = postgres_engine(request.getfixturevalue("pg_url"))
    with made.begin() as connection:
        insert(connection, ROWS)
    yield made
    made.dispose()


def run(engine: Engine, condition: str) -> set[str]:
    tree = parse_condition(condition)
    with engine.connect() as connection:
        found = selected_ids(connection, tree, NOW)
    assert found == oracle_ids(ROWS, tree, NOW), f"oracle disagrees on {condition!r}"
    return found


@pytest.mark.parametrize(("condition", "expected"), CASES[:-1], ids=[c for c, _ in CASES[:-1]])
def test_condition_selects_the_expected_traces(
    engine: Engine, condition: str, expected: set[str]
) -> None:
    assert run(engine, condition) == expected


def test_field_names_are_case_sensitive() -> None:
    with pytest.raises(ConditionError, match="unknown field 'ID'"):
        parse_condition(CASES[-1][0])


INJECTIONS_REFUSED = [
    "1=1; DROP TABLE traces",
    "input='a' OR 1=1",
    "metadata.a' OR '1'='1 = 'x'",
    "input = 'a'; DELETE FROM traces",
    "input = (SELECT input_text FROM traces)",
    "input IN (SELECT id FROM traces)",
    "EXISTS (SELECT 1)",
    "input = lower('a')",
    "sleep(5) = 1",
    "input = 'a' -- AND 1=0",
    "input = 'a' /* comment */",
    "/* */ input = 'a'",
    "input = 'a' UNION SELECT * FROM traces",
    'input = "a" OR "1"="1"',
    "score.q; DROP TABLE trace_scores = 1",
    "input = 'a' OR TRUE",
    "traces.input_text = 'a'",
    "input_text = 'a'",
    "meta = 'x'",
    "project_id = 1",
    "input = 'unterminated",
    "(" * 10_000 + "input = 'a'" + ")" * 10_000,
]
INJECTIONS_AS_DATA = [
    ("input = 'a'' OR ''1''=''1'", set()),
    ("output = 'a''; DROP TABLE traces; --'", {"t4"}),
    ("input LIKE '%''; DROP TABLE traces; --%'", set()),
    ("metadata.\"a; DROP TABLE traces\" = 'x'", set()),
    ('metadata."$.user" IS NULL', ALL),  # a JSON path spelled as a key is just a key
    ('metadata."user"."tier" = \'gold\'', {"t1"}),
    ("score.\"q' OR '1'='1\" > 0", set()),
    ("metadata.\"a') OR ('1'='1\" = 1", set()),
    ('label."q) OR (1=1" IS NOT NULL', set()),
    ("'prod'' OR ''1''=''1' IN tags", set()),
    ("input = '/* */ -- ;'", set()),
]


@pytest.mark.parametrize("condition", INJECTIONS_REFUSED)
def test_injection_is_refused_and_changes_nothing(engine: Engine, condition: str) -> None:
    before = snapshot(engine)
    with pytest.raises(ConditionError):
        run(engine, condition)
    assert snapshot(engine) == before


@pytest.mark.parametrize(("condition", "expected"), INJECTIONS_AS_DATA)
def test_injection_is_read_as_plain_data(engine: Engine, condition: str, expected: set) -> None:
    before = snapshot(engine)
    assert run(engine, condition) == expected
    assert snapshot(engine) == before
    assert before["traces"][1] == len(ROWS)


@pytest.mark.parametrize(("condition", "_expected"), INJECTIONS_AS_DATA)
def test_the_sql_holds_no_text_of_the_condition(
    engine: Engine, condition: str, _expected: set
) -> None:
    sql = str(compile_condition(parse_condition(condition), resolve, now=NOW).compile(engine))
    for word in ("DROP", "OR '1'", "1=1", "$.user", "/*", "--"):
        assert word not in sql


def test_a_compiled_condition_is_reused_with_new_values(engine: Engine) -> None:
    # SQLAlchemy caches the compiled SQL by structure: the second run must bind its own values
    assert run(engine, "metadata.user.tier = 'gold'") == {"t1"}
    assert run(engine, "metadata.user.tier = 'silver'") == {"t2"}
    assert run(engine, "input LIKE 'hello%'") == {"t2"}
    assert run(engine, "input LIKE 'Hello%'") == {"t1"}
    assert run(engine, "label.q = 'yes'") == {"t1"}
    assert run(engine, "label.q = 'no'") == set()
