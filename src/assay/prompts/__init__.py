"""Prompts as data: YAML files with instruction, examples, inputs and answer format.

Ragas' typed prompt classes (PydanticPrompt, ...) over the same data live in `assay.compat.ragas`
and are imported from Ragas' path, `assay.prompt`.
"""

from assay.prompts.prompt import Example, Prompt, load_prompt
from assay.prompts.render import fence, render

__all__ = [
    "Example",
    "Prompt",
    "fence",
    "load_prompt",
    "render",
]
