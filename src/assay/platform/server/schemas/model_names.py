"""Model names as platform users write them, and the check that they can run, made at submission.

RagMetrics' documentation writes models bare: `gpt-4`, `claude-3-sonnet-20240229`,
`llama3-8b-8192`. The library reads a bare name as OpenAI's (as Ragas does), which would send
Anthropic's and Groq's names to OpenAI and fail cell by cell once the job runs. The platform
knows these families, so a bare name of one goes to its own provider; any other bare name stays
OpenAI's. Whatever the name, the provider is built once when the work is submitted: a missing
key, a missing optional SDK or an unknown prefix is then a 422 naming the field, not a job that
can never succeed.
"""

from __future__ import annotations

import re

from assay.errors import MissingCredentials, UsageError
from assay.platform.server.errors import invalid

# (pattern of a bare name, its provider). Groq's names carry their context length or tier.
_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"claude-"), "anthropic"),
    (re.compile(r"(gpt-|chatgpt-|o[134](-|$))"), "openai"),
    (re.compile(r"gemini-"), "gemini"),
    (
        re.compile(
            r"(llama3-\d+b-\d+|llama-3\.\d+-[\w.-]*(instant|versatile|preview)"
            r"|mixtral-8x7b-\d+|gemma2?-\d+b-it)$"
        ),
        "groq",
    ),
)


def provider_of_bare_name(model: str) -> str | None:
    """The provider a bare model name belongs to, when its family is known."""
    for pattern, provider in _FAMILIES:
        if pattern.match(model):
            return provider
    return None


def routed(model: str) -> str:
    """The model string the library is given: a known bare name gets its provider's prefix."""
    model = model.strip()
    if not model or "/" in model.split("@", 1)[0] or model == "local":
        return model
    provider = provider_of_bare_name(model)
    return f"{provider}/{model}" if provider else model


def check_model(field: str, model: str | None) -> None:
    """Refuse, as a 422 on `field`, a model this server could never ask.

    Building the provider checks what can be known before a call: the prefix, the address,
    the credentials and the optional SDK. '' (the server's default judge) is not checked here.
    """
    if model is None or not model.strip():
        return
    from assay.models.factory import make_provider

    target = routed(model)
    try:
        make_provider(target)
    except MissingCredentials as exc:
        if target != model.strip():
            raise invalid(
                field,
                f"{model!r} is {exc.provider}'s model (asked as {target!r}): set "
                f"{exc.variable} where the server runs",
            ) from None
        raise invalid(
            field,
            f"{model!r} goes to {exc.provider}, which needs {exc.variable} set where the server "
            "runs; or name its provider: 'anthropic/…', 'groq/…', 'gemini/…', "
            "'ollama/…', or 'openai/…@http://host:port/v1' for an OpenAI-compatible server",
        ) from None
    except UsageError as exc:
        raise invalid(field, str(exc)) from None


__all__ = ["check_model", "provider_of_bare_name", "routed"]
