"""The app under test: one prompt that labels a movie review as positive or negative.

Two versions of the prompt are kept so you can see whether the second one is better:
`python evals.py --prompt v2`, then compare the runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

PROMPTS = {
    "v1": "Classify the sentiment of this movie review as positive or negative.",
    "v2": (
        "You label movie reviews for a recommendation service. Decide whether the reviewer, "
        "overall, recommends the film (positive) or not (negative). Mixed reviews count by their "
        "conclusion: praise for the visuals does not rescue a film the reviewer found tedious.\n"
        "Examples:\n"
        "- 'Gorgeous sets, but I nearly fell asleep.' -> negative\n"
        "- 'Clumsy start, then it wins you over completely.' -> positive"
    ),
}


class Sentiment(BaseModel):
    label: Literal["positive", "negative"]


async def run_prompt(llm, text: str, version: str = "v1") -> str:
    """The label the prompt gives `text`: "positive" or "negative"."""
    messages = [
        {"role": "system", "content": PROMPTS[version]},
        {"role": "user", "content": f"Review: {text}"},
    ]
    reply = await llm.agenerate(messages, schema=Sentiment)
    return reply.parsed.label
