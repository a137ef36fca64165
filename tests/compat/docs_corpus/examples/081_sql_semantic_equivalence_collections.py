# ruff: noqa
# Docs: SQL > Non Execution based metrics > SQL Query Semantic equivalence
# Changes:
#   - ragas -> assay in imports
#   - the SQL strings' line breaks restored (the dump collapsed them)
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI
from assay.llms.base import llm_factory
from assay.metrics.collections import SQLSemanticEquivalence

# Initialize the LLM
client = AsyncOpenAI()
llm = llm_factory("gpt-4o-mini", client=client)

# Create the metric
metric = SQLSemanticEquivalence(llm=llm)

# Evaluate SQL equivalence
result = await metric.ascore(
    response="""
    SELECT p.product_name, SUM(oi.quantity) AS total_quantity
    FROM order_items oi
    JOIN products p ON oi.product_id = p.product_id
    GROUP BY p.product_name;
    """,
    reference="""
    SELECT products.product_name, SUM(order_items.quantity) AS total_quantity
    FROM order_items
    INNER JOIN products ON order_items.product_id = products.product_id
    GROUP BY products.product_name;
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

print(f"Equivalent: {result.value == 1.0}")
print(f"Explanation: {result.reason}")
