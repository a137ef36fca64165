"""`assay metrics`: the catalogue with required fields, model needs and calls per sample."""

from __future__ import annotations


def metrics_command() -> None:
    """List every metric with the fields it needs, the models it uses and its calls per sample."""
    from rich.markup import escape

    from assay.cli.console import stdout
    from assay.metrics.registry import metric_classes

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
            f"uses {' + '.join(models)}; model calls per sample: {cls.calls_per_sample}"
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
