"""How the test-set generator asks a model: its own YAML prompts, rendered by `assay.prompts`.

The prompts live beside this module (`prompts/<id>.<language>.yaml`); `assay.prompts.render`
fences every input as data, so a document that says "ignore your instructions" is material, not
an order. Answers are structured: the LLM's output ladder (JSON schema, tool call, JSON mode,
prompt) makes them grammar-constrained where the provider supports it.

A drafting call gets a token budget in proportion to what it is given (`draft_budget`) and no
second try with a bigger one: on a small local judge a draft that runs past its budget is a
runaway (the same words again and again), which a doubled budget only makes dearer. The cut-off
raises `OutputTruncated`, and the sample loop records the candidate as truncated and replaces it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from assay.models.llm import LLM
from assay.prompts.prompt import Prompt, load_prompt
from assay.prompts.render import render
from assay.testset.text import count_tokens

PROMPT_DIR = Path(__file__).parent / "prompts"
T = TypeVar("T", bound=BaseModel)

# A draft is a question, an answer and verbatim quotes from the contexts: a fixed part for the
# JSON and the question, plus a share of the contexts the answer and quotes are taken from.
DRAFT_BASE_TOKENS = 192
DRAFT_TOKENS_PER_CONTEXT_TOKEN = 0.5
DRAFT_MAX_TOKENS = 1024


def draft_budget(*contexts: str) -> int:
    """`max_tokens` for a draft written from `contexts` (counted in words and punctuation):
    192 plus half the contexts' length, at most 1024."""
    size = sum(count_tokens(c) for c in contexts)
    return min(
        DRAFT_MAX_TOKENS, DRAFT_BASE_TOKENS + math.ceil(DRAFT_TOKENS_PER_CONTEXT_TOKEN * size)
    )


# An extractor's answer is a short JSON value: a list of at most so many short phrases, a
# summary, a title or a score. Its budget is that size with room to spare, and one try, as for
# drafts: a runaway list (one phrase again and again) is cut off and fails only its node.
EXTRACT_BASE_TOKENS = 48
EXTRACT_TOKENS_PER_ITEM = 32
EXTRACT_ITEMS_WHEN_UNBOUNDED = 20
SUMMARY_MAX_TOKENS = 320
TITLE_MAX_TOKENS = 64
SCORE_MAX_TOKENS = 32


def list_budget(max_items: int) -> int:
    """`max_tokens` for a list of at most `max_items` phrases (0: no bound was asked for)."""
    items = max_items if max_items > 0 else EXTRACT_ITEMS_WHEN_UNBOUNDED
    return EXTRACT_BASE_TOKENS + EXTRACT_TOKENS_PER_ITEM * items


def testset_prompt(prompt_id: str, language: str = "english") -> Prompt:
    return load_prompt(prompt_id, language, root=PROMPT_DIR)


async def ask(
    llm: Any,
    prompt: str | Prompt,
    values: Mapping[str, Any],
    schema: type[T],
    *,
    budget: int | None = None,
    **params: Any,
) -> T:
    """One structured call with `prompt` (a Prompt, or a test-set prompt id); the model layer retries, repairs and finally raises a typed error.

    With `budget`, the answer gets that many tokens and one try: a cut-off answer raises
    `OutputTruncated` at once (assay LLMs; other model objects just get `max_tokens`)."""
    if budget is not None:
        params["max_tokens"] = budget
        if isinstance(llm, LLM):
            params["grow_budget"] = False
    if isinstance(prompt, str):
        prompt = testset_prompt(prompt)
    response = await llm.agenerate(render(prompt, values), schema=schema, **params)
    return response.parsed


def require_llm(llm: Any, what: str) -> Any:
    if llm is None:
        from assay.errors import UsageError

        raise UsageError(f"{what} needs an llm: pass llm=llm_factory(...)")
    return llm


__all__ = [
    "DRAFT_MAX_TOKENS",
    "PROMPT_DIR",
    "ask",
    "draft_budget",
    "list_budget",
    "require_llm",
    "testset_prompt",
]
