"""A prompt is data: an instruction, worked examples, named inputs, and the shape of the answer.

Prompts live as YAML files in `prompts/data/` (one per prompt and language), never as f-strings
in metric code. Each has an `id` (`faithfulness.statements`), a `version`, and a content hash that
is stored with every result, so a score can always be traced to the exact wording that produced it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import UsageError

DATA_DIR = Path(__file__).parent / "data"


class Example(BaseModel):
    """One worked example: the inputs, and the answer the judge should give for them."""

    model_config = ConfigDict(frozen=True)

    input: dict[str, Any]
    output: Any  # a JSON object for structured prompts, a single word for verdict prompts


class Prompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    version: int = 1
    language: str = "english"
    instruction: str
    inputs: tuple[str, ...]
    # "json": answer as a JSON object (schema supplied by the metric);
    # "verdict": answer with one word from `choices`, read through token probabilities.
    answer: Literal["json", "verdict"] = "json"
    choices: tuple[str, ...] = ()
    examples: tuple[Example, ...] = Field(default_factory=tuple)

    @property
    def hash(self) -> str:
        """Short content hash: changes whenever wording, examples or format change."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "language": self.language,
            "hash": self.hash,
        }

    def with_examples(self, examples: list[Example]) -> Prompt:
        return self.model_copy(update={"examples": tuple(examples)})


def _file_for(prompt_id: str, language: str, root: Path) -> Path:
    return root / f"{prompt_id}.{language}.yaml"


def load_prompt(prompt_id: str, language: str = "english", *, root: Path | None = None) -> Prompt:
    """Load a prompt by id; a language without its own file falls back to English.
    Parsed once per process (prompts are immutable)."""
    return _load(prompt_id, language, root or DATA_DIR)


@functools.lru_cache(maxsize=512)
def _load(prompt_id: str, language: str, base: Path) -> Prompt:
    path = _file_for(prompt_id, language, base)
    if not path.exists() and language != "english":
        path = _file_for(prompt_id, "english", base)
    if not path.exists():
        raise UsageError(f"no prompt {prompt_id!r} (looked for {path})")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Prompt.model_validate(data)


__all__ = ["DATA_DIR", "Example", "Prompt", "load_prompt"]
