"""An email-triage workflow in three LLM steps: classify the email, pull out the fields that
category needs, draft a reply. Each step is one call; the result is a plain dict."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Category = Literal["Bug Report", "Billing", "Feature Request"]

FIELDS = {
    "Bug Report": "product_version (e.g. 2.1.4) and error_code (e.g. XYZ-123)",
    "Billing": "invoice_number (e.g. INV-2024-0001) and amount (with its currency)",
    "Feature Request": "feature (what is asked for, in a few words) and urgency (low, medium or high)",
}


class Classification(BaseModel):
    category: Category


class Fields(BaseModel):
    product_version: str | None = None
    error_code: str | None = None
    invoice_number: str | None = None
    amount: str | None = None
    feature: str | None = None
    urgency: str | None = None


async def process_email(llm, email: str) -> dict:
    """{"category": ..., "fields": {...}, "reply": ...} for one customer email."""
    classified = await llm.agenerate(
        [
            {
                "role": "system",
                "content": "Sort customer emails for a software company into Bug Report, Billing or Feature Request.",
            },
            {"role": "user", "content": email},
        ],
        schema=Classification,
    )
    category = classified.parsed.category

    extracted = await llm.agenerate(
        [
            {
                "role": "system",
                "content": f"This email is a {category}. Extract {FIELDS[category]}, copied "
                "exactly as written. Leave the other fields null.",
            },
            {"role": "user", "content": email},
        ],
        schema=Fields,
    )
    fields = {name: value for name, value in extracted.parsed.model_dump().items() if value}

    drafted = await llm.agenerate(
        [
            {
                "role": "system",
                "content": "Write a short, friendly reply (at most four sentences) from the support "
                "team. Acknowledge the problem or request, repeat the key details "
                "and say what happens next. Sign as 'The Support Team'.",
            },
            {
                "role": "user",
                "content": f"Category: {category}\nDetails: {fields}\n\nEmail:\n{email}",
            },
        ],
        max_tokens=250,
    )
    return {"category": category, "fields": fields, "reply": drafted.text.strip()}
