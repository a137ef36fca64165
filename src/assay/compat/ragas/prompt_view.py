"""`PromptView`: one of a metric's assay prompts, shown the way Ragas shows a prompt object.

assay's `Prompt` is immutable data; Ragas code edits prompt objects in place
(`prompt.instruction = "..."`, then `metric.set_prompts(name=prompt)`), translates them with
`await prompt.adapt("spanish", llm)`, prints `prompt.to_string()` and saves them. A view keeps a
mutable `instruction` and `examples` over the prompt it was made from; `assay_prompt()` is the
prompt with those edits, which is what the metric sends once the view is handed back to it (or
was read from it: see `assay.metrics.prompt_views`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from assay.compat.ragas.prompts import as_llm
from assay.errors import UsageError
from assay.prompts.localize import aadapt_prompt
from assay.prompts.prompt import Example, Prompt
from assay.prompts.render import render


class Fields(SimpleNamespace):
    """One side of an example, read by attribute as Ragas' pydantic models are (`.response`)."""

    def model_dump(self) -> dict[str, Any]:
        return dict(vars(self))


def _shown(value: Any) -> Any:
    return Fields(**value) if isinstance(value, dict) else value


def _plain(value: Any) -> Any:
    if isinstance(value, SimpleNamespace):
        return {k: _plain(v) for k, v in vars(value).items()}
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return value


class PromptView:
    """A mutable Ragas-style face of an assay prompt; `name` is the name Ragas gives it.
    `examples` is a list of (input, output) pairs, each side read by attribute (`.response`)."""

    def __init__(self, prompt: Prompt, name: str | None = None) -> None:
        self._prompt = prompt
        self.name = name or prompt.id
        self.instruction: str = prompt.instruction
        self.examples: list[tuple[Any, Any]] = [
            (_shown(example.input), _shown(example.output)) for example in prompt.examples
        ]

    @property
    def language(self) -> str:
        return self._prompt.language

    @property
    def id(self) -> str:
        return self._prompt.id

    def assay_prompt(self) -> Prompt:
        """The prompt as it stands after any edits."""
        examples = []
        for position, pair in enumerate(self.examples):
            if isinstance(pair, Example):
                examples.append(pair)
                continue
            try:
                given, answer = pair
                examples.append(Example(input=_plain(given), output=_plain(answer)))
            except (TypeError, ValueError) as exc:
                raise UsageError(
                    f"{self.name}.examples[{position}] must be an (input, output) pair: {exc}"
                ) from None
        return self._prompt.model_copy(
            update={"instruction": self.instruction, "examples": tuple(examples)}
        )

    def to_string(self, data: Any = None) -> str:
        """The prompt as the model reads it: every message's text, inputs filled from `data`."""
        prompt = self.assay_prompt()
        values = data.model_dump() if hasattr(data, "model_dump") else dict(data or {})
        filled = {name: values.get(name, f"{{{name}}}") for name in prompt.inputs}
        return "\n\n".join(str(message.content) for message in render(prompt, filled))

    async def adapt(
        self, target_language: str, llm: Any, adapt_instruction: bool = False
    ) -> PromptView:
        """A translated copy (the examples; the instruction too when asked)."""
        translated = await aadapt_prompt(
            self.assay_prompt(), target_language, as_llm(llm), adapt_instruction=adapt_instruction
        )
        return PromptView(translated, self.name)

    def save(self, file_path: str | os.PathLike[str]) -> None:
        """Write the prompt as JSON; an existing file is not replaced (as in Ragas)."""
        path = Path(file_path)
        if path.exists():
            raise FileExistsError(f"{path} exists; remove it or save elsewhere")
        data = {"name": self.name, "prompt": self.assay_prompt().model_dump(mode="json")}
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, file_path: str | os.PathLike[str]) -> PromptView:
        try:
            data = json.loads(Path(file_path).read_text(encoding="utf-8"))
            return cls(Prompt.model_validate(data["prompt"]), data.get("name"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{file_path}: not a saved prompt ({exc})") from None

    def __repr__(self) -> str:
        return f"PromptView(name={self.name!r}, id={self.id!r}, language={self.language!r})"


__all__ = ["PromptView"]
