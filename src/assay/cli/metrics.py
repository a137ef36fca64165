"""`assay metrics`: the catalogue with required fields and model needs."""

from __future__ import annotations

from rich.table import Table


def metrics_command() -> None:
    """List every metric with the fields it needs and the models it uses."""
    from assay.cli.app import stdout
    from assay.metrics.registry import metric_classes

    table = Table(title="assay metrics")
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("sample")
    table.add_column("required fields")
    table.add_column("llm", no_wrap=True)
    table.add_column("embeddings", no_wrap=True)
    for name, cls in metric_classes().items():
        table.add_row(
            name,
            cls.sample_kind.replace("_", "-"),
            ", ".join(cls.required_fields),
            "yes" if cls.needs_llm else "no",
            "yes" if cls.needs_embeddings else "no",
        )
    stdout.print(table)
