"""Scripted judges and embedders for alignment tests: canned answers through the real LLM path.

`faithfulness_judge(p_yes)` answers the faithfulness verdict prompt with a P(yes) chosen by the
response being judged (the last `<items>` block), with token log-probabilities as a local judge
gives them. `KeywordEmbedder` embeds a text as counts of a few keywords, so similarity is known.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from assay.models import LLM, Embeddings, Generation, ScriptedProvider, TokenLogprob
from assay.models.types import ModelRequest


def verdict(p: float) -> Generation:
    label = "yes" if p >= 0.5 else "no"
    chosen = p if label == "yes" else 1 - p
    tokens = [
        TokenLogprob(token="1", logprob=0.0),
        TokenLogprob(token=".", logprob=0.0),
        TokenLogprob(
            token=f" {label}",
            logprob=math.log(chosen),
            top={" yes": math.log(max(p, 1e-9)), " no": math.log(max(1 - p, 1e-9))},
        ),
    ]
    return Generation(text=f"1. {label}", finish_reason="stop", logprobs=tokens)


def last_items(request: ModelRequest) -> str:
    text = str(request.messages[-1].content)
    found = re.findall(r"<items>\n(.*?)\n</items>", text, re.S)
    return found[-1] if found else ""


def examples_in(request: ModelRequest) -> int:
    """Worked examples before the row: user/assistant pairs after the system message, minus the
    prompt's own built-in example."""
    return (len(request.messages) - 2) // 2


def faithfulness_judge(p_of: Callable[[ModelRequest], float]) -> tuple[LLM, ScriptedProvider]:
    provider = ScriptedProvider([lambda request: verdict(p_of(request))], repeat_last=True)
    return LLM(provider), provider


class KeywordProvider(ScriptedProvider):
    """Embeds a text as the counts of KEYWORDS in it (plus a constant, so no vector is zero)."""

    KEYWORDS = ("paris", "rome", "berlin", "madrid", "lisbon", "vienna")

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        self.embedded.extend(texts)
        vectors = [
            [float(text.lower().count(word)) for word in self.KEYWORDS] + [0.1] for text in texts
        ]
        return vectors, sum(len(text) for text in texts) // 4


def keyword_embedder() -> tuple[Embeddings, KeywordProvider]:
    provider = KeywordProvider()
    return Embeddings(provider), provider
