"""The app: an LLM writes one SQLite query for a question about the shop database."""

from __future__ import annotations

from db import SCHEMA
from pydantic import BaseModel

SYSTEM = (
    "You translate questions about a shop into one SQLite SELECT query. The database has these "
    f"tables:\n{SCHEMA}\nUse only these tables and columns. Return the query alone, without "
    "comments or explanation."
)


class Query(BaseModel):
    sql: str


async def generate_sql(llm, question: str) -> str:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    reply = await llm.agenerate(messages, schema=Query)
    return reply.parsed.sql.strip().rstrip(";")
