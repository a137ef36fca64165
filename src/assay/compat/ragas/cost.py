"""Ragas' token-usage names over assay's usage accounting.

assay meters every model call by itself (`Usage` per cell, `EvaluationResult.total_tokens()` and
`total_cost()`), so nothing needs a parser. These names exist for code written against Ragas:

    TokenUsage(input_tokens=9, output_tokens=9, model="")
    get_token_usage_for_openai(llm_result)       a LangChain LLMResult, an OpenAI completion, or an assay response
    CostCallbackHandler(token_usage_parser=...)  collects TokenUsage per call; total_tokens(), total_cost()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from assay.errors import UsageError


class TokenUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""

    def is_same_model(self, other: TokenUsage) -> bool:
        return self.model == other.model or not self.model or not other.model

    def __add__(self, other: TokenUsage) -> TokenUsage:
        if not isinstance(other, TokenUsage):
            return NotImplemented
        if not self.is_same_model(other):
            raise UsageError(
                f"cannot add the token usage of {self.model!r} and {other.model!r}; keep them apart"
            )
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            model=self.model or other.model,
        )

    def cost(
        self, cost_per_input_token: float, cost_per_output_token: float | None = None
    ) -> float:
        """US dollars at the given prices per token (output priced as input when not given)."""
        per_output = (
            cost_per_input_token if cost_per_output_token is None else cost_per_output_token
        )
        return self.input_tokens * cost_per_input_token + self.output_tokens * per_output


# A parser turns whatever one model call returned into its TokenUsage.
TokenUsageParser = Callable[[Any], TokenUsage]


def _counts(usage: Any) -> tuple[int, int] | None:
    if usage is None:
        return None
    if isinstance(usage, Mapping):
        get = usage.get
    else:

        def get(name: str, default: Any = None) -> Any:
            return getattr(usage, name, default)

    for input_name, output_name in (
        ("prompt_tokens", "completion_tokens"),
        ("input_tokens", "output_tokens"),
    ):
        if get(input_name) is not None or get(output_name) is not None:
            return int(get(input_name) or 0), int(get(output_name) or 0)
    return None


def get_token_usage_for_openai(llm_result: Any) -> TokenUsage:
    """Token counts of one OpenAI-style call: a LangChain `LLMResult` / `ChatResult` (its
    `llm_output["token_usage"]`), an OpenAI `ChatCompletion` (`.usage`), or an assay `ModelResponse`.
    Nothing to read gives zero counts, as in Ragas."""
    llm_output = getattr(llm_result, "llm_output", None)
    for usage in (
        llm_output.get("token_usage") if isinstance(llm_output, Mapping) else None,
        getattr(llm_result, "usage", None),
    ):
        counts = _counts(usage)
        if counts is not None:
            return TokenUsage(input_tokens=counts[0], output_tokens=counts[1])
    # LangChain chat generations carry usage on their messages.
    total = TokenUsage()
    for batch in getattr(llm_result, "generations", None) or []:
        for generation in batch if isinstance(batch, list) else [batch]:
            meta = getattr(getattr(generation, "message", None), "usage_metadata", None)
            counts = _counts(meta)
            if counts is not None:
                total = total + TokenUsage(input_tokens=counts[0], output_tokens=counts[1])
    return total


def get_token_usage_for_anthropic(llm_result: Any) -> TokenUsage:
    """Anthropic reports input_tokens/output_tokens; read the same places as for OpenAI."""
    return get_token_usage_for_openai(llm_result)


class CostCallbackHandler:
    """Collects the TokenUsage of each call (`on_llm_end(result)` through the parser, or `add(usage)`)."""

    def __init__(self, token_usage_parser: TokenUsageParser) -> None:
        if not callable(token_usage_parser):
            raise UsageError(
                "token_usage_parser must be a function from a model result to a TokenUsage"
            )
        self.token_usage_parser = token_usage_parser
        self.usage_data: list[TokenUsage] = []

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.usage_data.append(self.token_usage_parser(response))

    def add(self, usage: TokenUsage) -> None:
        self.usage_data.append(usage)

    def total_tokens(self) -> TokenUsage | list[TokenUsage]:
        """One TokenUsage when every call was to one model, else one per model."""
        by_model: dict[str, TokenUsage] = {}
        for usage in self.usage_data:
            by_model[usage.model] = by_model.get(usage.model, TokenUsage(model=usage.model)) + usage
        if len(by_model) <= 1:
            return next(iter(by_model.values()), TokenUsage())
        return list(by_model.values())

    def total_cost(
        self,
        cost_per_input_token: float | None = None,
        cost_per_output_token: float | None = None,
        per_model_costs: Mapping[str, tuple[float, float]] | None = None,
    ) -> float:
        """US dollars: one price for every call, or `per_model_costs` {model: (input, output)} per token."""
        per_model_costs = per_model_costs or {}
        if cost_per_input_token is None and not per_model_costs:
            raise UsageError(
                "total_cost needs cost_per_input_token=... or per_model_costs={model: (in, out)}"
            )
        total = 0.0
        for usage in self.usage_data:
            if usage.model in per_model_costs:
                total += usage.cost(*per_model_costs[usage.model])
            elif cost_per_input_token is not None:
                total += usage.cost(cost_per_input_token, cost_per_output_token)
            else:
                raise UsageError(f"no price for model {usage.model!r} in per_model_costs")
        return total


__all__ = [
    "CostCallbackHandler",
    "TokenUsage",
    "TokenUsageParser",
    "get_token_usage_for_anthropic",
    "get_token_usage_for_openai",
]
