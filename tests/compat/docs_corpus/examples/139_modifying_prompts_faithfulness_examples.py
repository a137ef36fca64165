# ruff: noqa
# Docs: Modifying prompts in metrics > Example: Customizing Faithfulness examples,
#       Verifying your customizations (two cells)
# Changes:
#   - ragas -> assay in imports
#   - filled in: client and llm of the page's first cell
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
# corpus: expect-stdout Full Prompt:
from openai import AsyncOpenAI  # filled in: first cell
from assay.llms import llm_factory  # filled in: first cell

client = AsyncOpenAI()  # filled in: first cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: first cell

from assay.metrics.collections import Faithfulness
from assay.metrics.collections.faithfulness.util import (
    NLIStatementInput,
    NLIStatementOutput,
    NLIStatementPrompt,
    StatementFaithfulnessAnswer,
)


# Create custom prompt with domain-specific examples
class DomainSpecificNLIPrompt(NLIStatementPrompt):
    examples = [
        (
            NLIStatementInput(
                context="Machine learning is a field within artificial intelligence that enables systems to learn from data.",
                statements=[
                    "Machine learning is a subset of AI.",
                    "Machine learning uses statistical techniques.",
                ],
            ),
            NLIStatementOutput(
                statements=[
                    StatementFaithfulnessAnswer(
                        statement="Machine learning is a subset of AI.",
                        reason="The context states ML is 'a field within artificial intelligence', supporting this claim.",
                        verdict=1,
                    ),
                    StatementFaithfulnessAnswer(
                        statement="Machine learning uses statistical techniques.",
                        reason="The context doesn't mention statistical techniques.",
                        verdict=0,
                    ),
                ]
            ),
        ),
    ]


# Update the metric with custom prompt
scorer = Faithfulness(llm=llm)
scorer.nli_statement_prompt = DomainSpecificNLIPrompt()

# Now evaluate with domain-specific prompts
result = await scorer.ascore(
    user_input="How do neural networks work?",
    response="Neural networks are inspired by biological neurons.",
    retrieved_contexts=[
        "Artificial neural networks are computing systems loosely inspired by biological neural networks."
    ],
)

from assay.metrics.collections.faithfulness.util import NLIStatementInput

# Create sample input to test the prompt
sample_input = NLIStatementInput(
    context="Paris is the capital and most populous city of France.",
    statements=["The capital of France is Paris.", "Paris is in Germany."],
)

# Generate and view the full prompt string
full_prompt = scorer.nli_statement_prompt.to_string(sample_input)
print("Full Prompt:")
print(full_prompt)
