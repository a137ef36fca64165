# ruff: noqa
# Docs: SQL > LLMSQLEquivalence (Legacy)
# Changes:
#   - ragas -> assay in imports
#   - the SQL strings' line breaks restored (the dump collapsed them)
#   - filled in: openai_model (the docs leave it to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.metrics import LLMSQLEquivalence
from assay.dataset_schema import SingleTurnSample

from assay.llms import llm_factory  # filled in

openai_model = llm_factory("gpt-4o")  # filled in

sample = SingleTurnSample(
    response="""
    SELECT p.product_name, SUM(oi.quantity) AS total_quantity
    FROM order_items oi
    JOIN products p ON oi.product_id = p.product_id
    GROUP BY p.product_name;
    """,
    reference="""
    SELECT p.product_name, COUNT(oi.quantity) AS total_quantity
    FROM order_items oi
    JOIN products p ON oi.product_id = p.product_id
    GROUP BY p.product_name;
    """,
    reference_contexts=[
        """
        Table order_items:
        - order_item_id: INT
        - order_id: INT
        - product_id: INT
        - quantity: INT
        """,
        """
        Table products:
        - product_id: INT
        - product_name: VARCHAR
        - price: DECIMAL
        """,
    ],
)

scorer = LLMSQLEquivalence()
scorer.llm = openai_model
await scorer.single_turn_ascore(sample)
