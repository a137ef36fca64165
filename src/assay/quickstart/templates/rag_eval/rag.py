"""A small retrieval-augmented app: keyword retrieval over a handful of support articles, then
an answer written by an LLM from the passages it found.

Replace DOCUMENTS and the prompt with your own; `evals.py` only needs `RagApp.aquery`.
"""

from __future__ import annotations

import math
import re
from collections import Counter

DOCUMENTS = [
    "Warranty. Every Kestrel e-bike frame carries a ten-year warranty. Motors and batteries are "
    "covered for two years or 800 charge cycles, whichever comes first. Wear parts such as tyres, "
    "brake pads and chains are not covered.",
    "Returns. An unused bike can be returned within 30 days of delivery for a full refund. A bike "
    "that has been ridden can be returned within 14 days, minus a 10 percent restocking fee. "
    "Return shipping is free within the EU.",
    "Battery care. If the bike will not be used for more than a month, store the battery between "
    "10 and 25 degrees Celsius and keep it between 30 and 80 percent charged. Never charge a "
    "battery that is below 0 degrees Celsius.",
    "Shipping. Bikes ship assembled except for the pedals and the handlebar, which take about "
    "15 minutes to fit. Delivery within Germany takes 3 to 5 working days, elsewhere in the EU "
    "5 to 8 working days.",
    "Service. The first service is free and is due after 300 kilometres or three months, "
    "whichever comes first. Authorised workshops are listed in the Kestrel app under Service partners.",
    "Models. The Kestrel Urban has a range of 45 km and weighs 19 kg. The Kestrel Trail has a "
    "625 Wh battery, a range of 70 km and weighs 24 kg.",
]

SYSTEM = (
    "You are the support assistant of Kestrel, a maker of e-bikes. Answer the customer's question "
    "in one to three sentences, using only the passages given. If they do not contain the answer, "
    "say that you do not know."
)

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {
    "the",
    "a",
    "an",
    "is",
    "are",
    "of",
    "to",
    "and",
    "or",
    "in",
    "on",
    "for",
    "my",
    "i",
    "can",
    "what",
    "how",
    "which",
    "when",
    "do",
    "does",
    "it",
    "be",
    "should",
    "has",
    "have",
    "that",
}


def _terms(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in _STOP]


class RagApp:
    """`await RagApp(llm).aquery(question)` -> {"answer": str, "contexts": [passages used]}."""

    def __init__(self, llm, documents: list[str] | None = None, top_k: int = 2) -> None:
        self.llm = llm
        self.documents = documents or DOCUMENTS
        self.top_k = top_k
        self._doc_terms = [Counter(_terms(doc)) for doc in self.documents]
        frequency = Counter(term for terms in self._doc_terms for term in terms)
        self._idf = {
            term: math.log(1 + len(self.documents) / count) for term, count in frequency.items()
        }

    def retrieve(self, question: str) -> list[str]:
        """The `top_k` documents sharing the most (rare) words with the question."""
        wanted = set(_terms(question))
        scores = [sum(self._idf[t] for t in wanted if t in terms) for terms in self._doc_terms]
        ranked = sorted(range(len(self.documents)), key=lambda i: -scores[i])
        return [self.documents[i] for i in ranked[: self.top_k] if scores[i] > 0]

    async def aquery(self, question: str) -> dict:
        contexts = self.retrieve(question)
        passages = (
            "\n\n".join(f"[{i}] {text}" for i, text in enumerate(contexts, start=1))
            or "(none found)"
        )
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Passages:\n{passages}\n\nQuestion: {question}"},
        ]
        reply = await self.llm.agenerate(messages, max_tokens=200)
        return {"answer": reply.text.strip(), "contexts": contexts}
