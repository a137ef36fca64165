"""How the test-set generator asks a model: its own YAML prompts, rendered by `assay.prompts`.

The prompts live beside this module (`prompts/<id>.<language>.yaml`); `assay.prompts.render`
fences every input as data, so a document that says "ignore your instructions" is material, not
an order. Answers are structured: the LLM's output ladder (JSON schema, tool call, JSON mode,
prompt) makes them grammar-constrained where the provider supports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from assay.prompts.prompt import Prompt, load_prompt
from assay.prompts.render import render

PROMPT_DIR = Path(__file__).parent / "prompts"
T = TypeVar("T", bound=BaseModel)


def testset_prompt(prompt_id: str, language: str = "english") -> Prompt:
    return load_prompt(prompt_id, language, root=PROMPT_DIR)


async def ask(
    llm: Any,
    prompt_id: str,
    values: Mapping[str, Any],
    schema: type[T],
    **params: Any,
) -> T:
    """One structured call; the model layer retries, repairs and finally raises a typed error."""
    response = await llm.agenerate(
        render(testset_prompt(prompt_id), values), schema=schema, **params
    )
    return response.parsed


def require_llm(llm: Any, what: str) -> Any:
    if llm is None:
        from assay.errors import UsageError

        raise UsageError(f"{what} needs an llm: pass llm=llm_factory(...)")
    return llm


__all__ = ["PROMPT_DIR", "ask", "require_llm", "testset_prompt"]
