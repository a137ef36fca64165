"""`assay metrics`: the catalogue with required fields, model needs and the calls a typical
sample costs (from each metric's own `estimate()`, see `assay.metrics.typical`)."""

from __future__ import annotations

from typing import Any


def metrics_command() -> None:
    """List every metric with the fields it needs, the models it uses and its calls per sample."""
    from rich.markup import escape

    from assay.cli.console import stdout
    from assay.metrics.registry import metric_classes
    from assay.metrics.typical import typical_calls

    catalogue = metric_classes()
    width = max(len(name) for name in catalogue)
    for name, cls in catalogue.items():
        models = [
            m
            for m, needed in (
                ("llm", _default(cls, "needs_llm")),
                ("embeddings", _default(cls, "needs_embeddings")),
            )
            if needed
        ]
        uses = (
            f"uses {' + '.join(models)}; {_typical_cost(cls, typical_calls)}"
            if models
            else "no model"
        )
        stdout.print(
            f"[bold]{name:<{width}}[/bold]  {cls.sample_kind.replace('_', '-'):<11}  "
            f"needs {escape(', '.join(cls.required_fields))}; {escape(uses)}",
            highlight=False,
            soft_wrap=True,
        )


def _default(cls: type, attribute: str) -> bool:
    """A class-level flag, or for a metric whose needs depend on its settings (a property), the
    value with the default settings."""
    value = getattr(cls, attribute)
    if isinstance(value, property):
        return bool(getattr(cls(), attribute))
    return bool(value)


def _typical_cost(cls: type, typical_calls: Any) -> str:
    """Requests and tokens of the default-configured metric on the typical sample."""
    try:
        metric = cls()
    except Exception:  # a metric with a required setting (e.g. HHEM's classifier): no default
        return "cost depends on its settings"
    cost = typical_calls(metric)
    tokens = cost.input_tokens + cost.output_tokens
    text = f"{cost.requests} judge call{'s' if cost.requests != 1 else ''} (~{tokens:,} tokens)"
    if cost.embedding_tokens:
        text += f" + embeddings (~{cost.embedding_tokens:,} tokens)"
    return text + " on a typical sample"
