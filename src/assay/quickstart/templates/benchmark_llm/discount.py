"""The task both models do: work out a customer's discount from the shop's rules."""

from __future__ import annotations

from pydantic import BaseModel, Field

RULES = """\
- 15% for a customer aged 65 or over, or a student (15% once, even when both apply).
- 20% for a customer whose yearly income is below 25,000 EUR.
- 10% for a customer who has been a member for 3 years or more.
- 5% when the order is over 500 EUR.
Add up every discount that applies, then cap the total at 35%."""

SYSTEM = (
    "You work out the discount a customer gets, in whole percent, from these rules:\n"
    f"{RULES}\nSay briefly which rules apply."
)


class Discount(BaseModel):
    reason: str
    discount_percent: int = Field(ge=0, le=35)


async def compute_discount(llm, customer: str) -> Discount:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": customer}]
    return (await llm.agenerate(messages, schema=Discount)).parsed
