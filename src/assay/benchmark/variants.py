"""Prompt wording tried on dev data: `assay benchmark ... --prompts-dir DIR`.

DIR holds YAML files shaped like the shipped ones (`<prompt id>.<language>.yaml`, as in
`assay/prompts/data`). Each file whose id is one of the metric's prompts replaces that prompt for
the run. The record then carries the variant's hash, so its result files and run directory never
mix with the shipped wording's, and `--threshold-from` refuses a threshold tuned with other wording.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml
from pydantic import ValidationError

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.prompts.prompt import Prompt


def with_prompt_variants(
    metric: Metric, directory: str | Path, *, missing_ok: bool = False
) -> Metric:
    """A copy of `metric` with every prompt `directory` has a file for replaced. A variant must
    keep the shipped prompt's inputs and answer shape (the metric fills and reads it the same
    way); a directory with no file for any of the metric's prompts is an error, not a silent
    run of the shipped wording, unless `missing_ok` (a folder holding variants for some languages
    only, used across languages)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise UsageError(f"--prompts-dir: {folder} is not a directory")
    prompt_ids = tuple(getattr(metric, "prompt_ids", ()))
    if not prompt_ids or not hasattr(metric, "set_prompt"):
        raise UsageError(f"--prompts-dir: {metric.name} sends no prompt to a judge")
    language = getattr(metric, "language", "english")
    variant = dataclasses.replace(metric)  # prompt overrides live on the copy only
    for earlier in getattr(metric, "_prompt_overrides", {}).values():
        variant.set_prompt(earlier)  # a replace() copy starts without them
    replaced = []
    for prompt_id in prompt_ids:
        path = folder / f"{prompt_id}.{language}.yaml"
        if not path.exists():
            continue
        shipped = metric.judge_prompt(prompt_id)  # type: ignore[attr-defined]  # an LLM judge's
        prompt = _read(path)
        for field in ("id", "inputs", "answer", "choices"):
            if getattr(prompt, field) != getattr(shipped, field):
                raise UsageError(
                    f"--prompts-dir: {path} field {field!r} is {getattr(prompt, field)!r}; "
                    f"the metric's prompt has {getattr(shipped, field)!r}"
                )
        variant.set_prompt(prompt)
        replaced.append(prompt_id)
    if not replaced and not missing_ok:
        wanted = ", ".join(f"{prompt_id}.{language}.yaml" for prompt_id in prompt_ids)
        raise UsageError(f"--prompts-dir: {folder} has none of {metric.name}'s prompts ({wanted})")
    return variant


def _read(path: Path) -> Prompt:
    """Read afresh, not through `load_prompt`'s per-process cache: a variant is edited between
    runs, and a stale copy would measure the previous wording under the new file's name."""
    try:
        return Prompt.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise UsageError(f"--prompts-dir: {path} is not a prompt file: {exc}") from None


__all__ = ["with_prompt_variants"]
