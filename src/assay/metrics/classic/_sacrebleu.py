"""Shared plumbing for the sacrebleu-backed metrics (BLEU and chrF)."""

from __future__ import annotations

from typing import Any

from assay.errors import UsageError


def check_kwargs(owner: str, kwargs: Any) -> dict[str, Any]:
    """`kwargs` must be a mapping of sacrebleu keyword arguments; None means none."""
    if kwargs is None:
        return {}
    if not isinstance(kwargs, dict):
        raise UsageError(
            f"{owner}(kwargs=...) must be a dict of sacrebleu options, got {type(kwargs).__name__}"
        )
    return dict(kwargs)


def corpus_score(
    function_name: str, owner: str, response: str, reference: str, kwargs: dict[str, Any]
) -> Any:
    """Run `sacrebleu.<function_name>` on one hypothesis against one reference.

    The whole response is one segment and the whole reference its single reference, so
    multi-sentence texts are compared as wholes (n-grams may cross sentence boundaries).
    """
    import sacrebleu

    function = getattr(sacrebleu, function_name)
    try:
        return function([response], [[reference]], **kwargs)
    except TypeError as exc:
        # An unknown option is the caller's mistake; say which metric and what sacrebleu said.
        raise UsageError(
            f"{owner}: sacrebleu.{function_name} rejected kwargs {kwargs!r}: {exc}"
        ) from exc
