"""A small RAG app: keyword retrieval over a handful of support articles, then an LLM answer.

`top_k` (how many articles are retrieved) is the setting evals.py compares; put your own
retriever in `RagApp.retrieve` to compare yours.
"""

from __future__ import annotations

import math
import re
from collections import Counter

ARTICLES = {
    "warranty": "Every Kestrel e-bike frame carries a ten-year warranty. Motors and batteries are "
    "covered for two years or 800 charge cycles, whichever comes first. Tyres, brake pads and "
    "chains are wear parts and are not covered.",
    "returns": "An unused bike can be returned within 30 days of delivery for a full refund. A "
    "ridden bike can be returned within 14 days, minus a 10 percent restocking fee.",
    "battery": "For storage longer than a month, keep the battery between 10 and 25 degrees "
    "Celsius and 30 to 80 percent charged. Never charge a battery below 0 degrees Celsius.",
    "shipping": "Bikes ship assembled except for the pedals and the handlebar, which take about "
    "15 minutes to fit. Delivery takes 3 to 5 working days within Germany.",
    "service": "The first service is free and is due after 300 kilometres or three months, "
    "whichever comes first. Authorised workshops are listed in the Kestrel app.",
    "models": "The Kestrel Urban has a range of 45 km and weighs 19 kg. The Kestrel Trail has a "
    "625 Wh battery and a range of 70 km, and weighs 24 kg.",
}

SYSTEM = (
    "You are the support assistant of Kestrel, a maker of e-bikes. Answer in one to three "
    "sentences, using only the passages given. If they do not hold the answer, say so."
)

_STOP = {
    "a",
    "an",
    "and",
    "are",
    "be",
    "can",
    "do",
    "does",
    "for",
    "how",
    "i",
    "in",
    "is",
    "it",
    "my",
    "of",
    "on",
    "or",
    "should",
    "the",
    "to",
    "what",
    "when",
    "which",
}


def _terms(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in _STOP}


class RagApp:
    """`await RagApp(llm, top_k=2).aquery(question)` -> {"answer", "contexts", "context_ids"}."""

    def __init__(self, llm, top_k: int = 2) -> None:
        self.llm = llm
        self.top_k = top_k
        self._terms = {key: _terms(text) for key, text in ARTICLES.items()}
        counts = Counter(term for terms in self._terms.values() for term in terms)
        self._idf = {term: math.log(1 + len(ARTICLES) / n) for term, n in counts.items()}

    def retrieve(self, question: str) -> list[str]:
        """The ids of the `top_k` articles sharing the most (rare) words with the question."""
        wanted = _terms(question)
        scores = {
            key: sum(self._idf[t] for t in wanted & terms) for key, terms in self._terms.items()
        }
        ranked = sorted((key for key in scores if scores[key] > 0), key=lambda key: -scores[key])
        return ranked[: self.top_k]

    async def aquery(self, question: str) -> dict:
        ids = self.retrieve(question)
        passages = "\n\n".join(f"[{key}] {ARTICLES[key]}" for key in ids) or "(none found)"
        reply = await self.llm.agenerate(
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Passages:\n{passages}\n\nQuestion: {question}"},
            ],
            max_tokens=200,
        )
        return {
            "answer": reply.text.strip(),
            "contexts": [ARTICLES[key] for key in ids],
            "context_ids": ids,
        }
