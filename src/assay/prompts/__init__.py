"""Prompts as data: YAML files with instruction, examples, inputs and answer format.

Ragas' prompt classes (typed pydantic prompts over the same data) are here too:
`ragas_prompts.py` (BasePrompt, StringPrompt, PydanticPrompt, DynamicFewShotPrompt, PromptMixin, ...)
and `faithfulness.py` (the faithfulness and factual-correctness prompt classes).
"""

from assay.prompts.faithfulness import (
    ClaimDecompositionInput,
    ClaimDecompositionOutput,
    ClaimDecompositionPrompt,
    FaithfulnessInput,
    FaithfulnessOutput,
    FaithfulnessPrompt,
    NLIStatementInput,
    NLIStatementOutput,
    NLIStatementPrompt,
    StatementFaithfulnessAnswer,
    StatementGeneratorInput,
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)
from assay.prompts.prompt import Example, Prompt, load_prompt
from assay.prompts.ragas_prompts import (
    BasePrompt,
    BoolIO,
    DynamicFewShotPrompt,
    PromptMixin,
    PydanticPrompt,
    RagasOutputParserException,
    StringIO,
    StringPrompt,
)
from assay.prompts.render import fence, render

__all__ = [
    "BasePrompt",
    "BoolIO",
    "ClaimDecompositionInput",
    "ClaimDecompositionOutput",
    "ClaimDecompositionPrompt",
    "DynamicFewShotPrompt",
    "Example",
    "FaithfulnessInput",
    "FaithfulnessOutput",
    "FaithfulnessPrompt",
    "NLIStatementInput",
    "NLIStatementOutput",
    "NLIStatementPrompt",
    "Prompt",
    "PromptMixin",
    "PydanticPrompt",
    "RagasOutputParserException",
    "StatementFaithfulnessAnswer",
    "StatementGeneratorInput",
    "StatementGeneratorOutput",
    "StatementGeneratorPrompt",
    "StringIO",
    "StringPrompt",
    "fence",
    "load_prompt",
    "render",
]
