"""SQL semantic equivalence: the judge explains both queries against the schema; the reason is that
explanation."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError
from assay.metrics.sql import LLMSQLEquivalence, SQLSemanticEquivalence
from tests.metrics.rag.scripted import judge

SCHEMA = [
    "Table customers: id INT, name VARCHAR, active BOOLEAN",
    "Table orders: id INT, customer_id INT, amount DECIMAL, order_date DATE",
]
REFERENCE = (
    "SELECT customers.name, SUM(orders.amount) FROM customers JOIN orders ON customers.id = orders.customer_id "
    "WHERE customers.active = true GROUP BY customers.name;"
)
CANDIDATE = (
    "SELECT c.name, SUM(o.amount) AS total FROM customers c INNER JOIN orders o ON c.id = o.customer_id "
    "WHERE c.active = 1 GROUP BY c.name;"
)
COUNTING = (
    "SELECT c.name, COUNT(o.amount) FROM customers c JOIN orders o ON c.id = o.customer_id "
    "WHERE c.active = 1 GROUP BY c.name;"
)


def judgement(equivalent: bool, ref: str, cand: str) -> str:
    return json.dumps(
        {"reference_explanation": ref, "candidate_explanation": cand, "equivalent": equivalent}
    )


def test_equivalent_queries_score_one_with_the_explanation_as_reason():
    llm, provider = judge(
        judgement(
            True,
            "Total order amount per active customer.",
            "Total order amount per active customer, with aliases and 1 for true.",
        )
    )
    result = SQLSemanticEquivalence(llm=llm).score(
        response=CANDIDATE, reference=REFERENCE, reference_contexts=SCHEMA
    )
    assert result.value == 1.0
    assert result.reason == (
        "Reference: Total order amount per active customer. Candidate: Total order amount per "
        "active customer, with aliases and 1 for true. Equivalent."
    )
    assert result.details["equivalent"] is True
    body = provider.requests[0].messages[-1].content
    assert f"<schema>\n{SCHEMA[0]}\n{SCHEMA[1]}\n</schema>" in body
    assert f"<reference_query>\n{REFERENCE}\n</reference_query>" in body
    assert f"<candidate_query>\n{CANDIDATE}\n</candidate_query>" in body


def test_sum_versus_count_is_not_equivalent():
    llm, _ = judge(judgement(False, "Sums the amounts.", "Counts the orders."))
    result = LLMSQLEquivalence(llm=llm).score(
        response=COUNTING, reference=REFERENCE, reference_contexts=SCHEMA
    )
    assert result.value == 0.0
    assert "Sums the amounts." in result.reason and "Counts the orders." in result.reason
    assert result.reason.endswith("Not equivalent.")


def test_without_schema_and_in_evaluate():
    llm, provider = judge(judgement(True, "a", "b"), judgement(False, "c", "d"))
    result = evaluate(
        [
            {"response": CANDIDATE, "reference": REFERENCE},
            {"response": COUNTING, "reference": REFERENCE, "reference_contexts": SCHEMA},
        ],
        [SQLSemanticEquivalence()],
        llm=llm,
        show_progress=False,
        max_concurrency=1,
    )
    assert result["sql_semantic_equivalence"] == [1.0, 0.0]
    assert "<schema>\n(no schema given)\n</schema>" in provider.requests[0].messages[-1].content
    assert result.outcome(0, "sql_semantic_equivalence").reason.startswith(
        "Reference: a Candidate: b"
    )


def test_a_malformed_judgement_is_repaired_once_then_an_error():
    llm, provider = judge('{"reference_explanation": "x"}', '{"equivalent": "perhaps"}')
    with pytest.raises(OutputParseError):
        SQLSemanticEquivalence(llm=llm).score(response=CANDIDATE, reference=REFERENCE)
    assert len(provider.requests) == 2
    assert "could not be used" in provider.requests[1].messages[-1].content
