"""Ragas' two string-template prompts.

- `Prompt` (Ragas' `ragas.prompt.simple_prompt.Prompt`): an instruction with `{placeholders}` and
  few-shot examples, as the decorated metrics and `DynamicFewShotPrompt.from_prompt` use it.
  `format(**inputs)` gives the text to send; `add_example(inputs, output)` adds a pair; `save` /
  `load` keep it as JSON.
- `string_prompt(instruction)`: a `StringPrompt` whose `generate(llm, data={...})` fills the
  instruction's placeholders from `data` and returns the model's text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.compat.ragas.prompts import StringPrompt, fill_instruction, with_examples
from assay.errors import UsageError


class SimplePrompt:
    """An instruction template with few-shot examples (pairs of dicts)."""

    def __init__(
        self,
        instruction: str,
        few_shot_examples: list[tuple[dict[str, Any], dict[str, Any]]] | None = None,
    ) -> None:
        if not isinstance(instruction, str) or not instruction.strip():
            raise UsageError("instruction must be a non-empty string")
        self.instruction = instruction
        self.examples: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for inputs, output in few_shot_examples or []:
            self.add_example(inputs, output)

    def add_example(self, inputs: Mapping[str, Any], output: Mapping[str, Any]) -> None:
        if not isinstance(inputs, Mapping) or not isinstance(output, Mapping):
            raise UsageError("an example is a pair of dicts: (inputs, output)")
        self.examples.append((dict(inputs), dict(output)))

    def format(self, **inputs: Any) -> str:
        return with_examples(fill_instruction(self.instruction, inputs), self.examples)

    to_string = format

    def __str__(self) -> str:
        return self.instruction

    def save(self, path: str | os.PathLike[str]) -> None:
        data = {"instruction": self.instruction, "examples": [list(pair) for pair in self.examples]}
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SimplePrompt:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(data["instruction"], [tuple(pair) for pair in data.get("examples", [])])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}: not a saved prompt ({exc})") from None


class _TemplateStringPrompt(StringPrompt):
    def __init__(self, instruction: str, **options: Any) -> None:
        super().__init__(**options)
        self.instruction = instruction

    async def generate_multiple(
        self,
        llm: Any,
        data: Any = None,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
        **kwargs: Any,
    ) -> list[str]:
        if data is None or isinstance(data, Mapping):
            data = fill_instruction(self.instruction, data or {})
        return await super().generate_multiple(
            llm, data, n=n, temperature=temperature, stop=stop, callbacks=callbacks, **kwargs
        )


def string_prompt(instruction: str, **options: Any) -> StringPrompt:
    """A StringPrompt over `instruction`; `generate(llm, data={...})` fills its placeholders."""
    if not isinstance(instruction, str) or not instruction.strip():
        raise UsageError("instruction must be a non-empty string")
    return _TemplateStringPrompt(instruction, **options)


__all__ = ["SimplePrompt", "string_prompt"]
