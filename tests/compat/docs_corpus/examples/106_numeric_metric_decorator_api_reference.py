# ruff: noqa
# Docs: API Reference > Metrics > numeric_metric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
#   - the asserted value is what the docs' own function returns for this input
# corpus: docs-bug AttributeError: has no attribute 'value' -- calling a decorated metric returns the function's raw value in Ragas too, so result.value fails there as well
from assay.metrics import numeric_metric


@numeric_metric(name="relevance_score", allowed_values=(0.0, 1.0))
def calculate_relevance(user_input: str, response: str) -> float:
    """Calculate relevance score between 0 and 1."""
    # Simple word overlap example
    user_words = set(user_input.lower().split())
    response_words = set(response.lower().split())
    if not user_words:
        return 0.0
    overlap = len(user_words & response_words)
    return overlap / len(user_words)


result = calculate_relevance(
    user_input="What is Python?", response="Python is a programming language"
)
print(result.value)  # Numeric score between 0.0 and 1.0
