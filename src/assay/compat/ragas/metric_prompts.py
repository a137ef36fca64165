"""The prompt attributes Ragas metrics carry, attached to assay's metric classes.

Ragas code reads and edits a metric's prompts through attributes
(`scorer.nli_statement_prompt.instruction = "..."`, `scorer.prompt = MyPrompt()`); assay's metrics
name their prompts by id instead (`metric.judge_prompt("supported")`). This table is the one place
that says which Ragas attribute is which assay prompt, and with which typed Ragas prompt class it
is shown (`PromptView`, an editable face of the assay prompt, where Ragas' answer has another
shape than assay's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.compat.ragas.prompt_attributes import PromptAttribute
from assay.compat.ragas.prompt_classes import (
    ClaimDecompositionPrompt,
    NLIStatementPrompt,
    StatementGeneratorPrompt,
)
from assay.compat.ragas.prompt_view import PromptView
from assay.metrics.answer.answer_correctness import AnswerCorrectness
from assay.metrics.rag.answer_relevancy import AnswerRelevancy
from assay.metrics.rag.factual_correctness import FactualCorrectness
from assay.metrics.rag.faithfulness import Faithfulness
from assay.metrics.rag.noise_sensitivity import NoiseSensitivity

PromptId = str | Callable[[Any], str]

# metric class -> Ragas attribute -> (assay prompt id, or a function of the metric; view class)
PROMPT_ATTRIBUTES: dict[type, dict[str, tuple[PromptId, type | None]]] = {
    Faithfulness: {
        "statement_generator_prompt": ("claims", StatementGeneratorPrompt),
        "nli_statement_prompt": ("supported", NLIStatementPrompt),
    },
    FactualCorrectness: {
        "prompt": (lambda metric: metric._claims_prompt_id, ClaimDecompositionPrompt),
        "nli_prompt": ("supported", NLIStatementPrompt),
    },
    NoiseSensitivity: {
        "statement_prompt": ("claims", StatementGeneratorPrompt),
        "faithfulness_prompt": ("supported", NLIStatementPrompt),
    },
    AnswerCorrectness: {
        "statement_generator_prompt": ("claims.coarse", PromptView),
        "correctness_classifier_prompt": ("supported", PromptView),
    },
    AnswerRelevancy: {
        "prompt": (lambda metric: metric.prompt_ids[0], PromptView),
    },
}


def attach_prompt_attributes() -> None:
    """Give each metric class its Ragas prompt attributes (never over a name the class defines)."""
    for cls, attributes in PROMPT_ATTRIBUTES.items():
        for name, (prompt_id, view) in attributes.items():
            if name in vars(cls):
                continue
            attribute = PromptAttribute(prompt_id, view)
            attribute.__set_name__(cls, name)
            setattr(cls, name, attribute)


__all__ = ["PROMPT_ATTRIBUTES", "attach_prompt_attributes"]
