"""Scripted judges: canned model answers through the real LLM path (no network)."""

from __future__ import annotations

import json
import math

from assay.models import LLM, Embeddings, Generation, ScriptedProvider, TokenLogprob


def judge(*answers, **options) -> tuple[LLM, ScriptedProvider]:
    provider = ScriptedProvider(list(answers), **options)
    return LLM(provider), provider


def claims(*items: str) -> str:
    return json.dumps({"claims": list(items)})


def verdict_lines(*labels: str) -> str:
    return "\n".join(f"{i}. {label}" for i, label in enumerate(labels, start=1))


def verdicts_with_probabilities(*p_yes: float) -> Generation:
    """A verdict reply whose verdict tokens carry log-probabilities, as a local judge returns."""
    tokens: list[TokenLogprob] = []
    lines = []
    for index, p in enumerate(p_yes, start=1):
        label = "yes" if p >= 0.5 else "no"
        lines.append(f"{index}. {label}")
        tokens.append(TokenLogprob(token=f"{index}", logprob=0.0))
        tokens.append(TokenLogprob(token=".", logprob=0.0))
        chosen = p if label == "yes" else 1 - p
        tokens.append(
            TokenLogprob(
                token=f" {label}",
                logprob=math.log(chosen),
                top={" yes": math.log(p), " no": math.log(1 - p)},
            )
        )
        tokens.append(TokenLogprob(token="\n", logprob=0.0))
    return Generation(text="\n".join(lines), finish_reason="stop", logprobs=tokens)


def embedder(vectors: dict[str, list[float]]) -> Embeddings:
    return Embeddings(ScriptedProvider(vectors=vectors))
