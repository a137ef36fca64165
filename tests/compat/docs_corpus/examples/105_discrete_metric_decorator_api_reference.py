# ruff: noqa
# Docs: API Reference > Metrics > discrete_metric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
# corpus: docs-bug AttributeError: has no attribute 'value' -- calling a decorated metric returns the function's raw value in Ragas too, so result.value fails there as well
from assay.metrics import discrete_metric


@discrete_metric(name="sentiment", allowed_values=["positive", "negative"])
def sentiment_metric(user_input: str, response: str) -> str:
    return "positive" if "good" in response else "negative"


result = sentiment_metric(user_input="How are you?", response="I'm good!")
print(result.value)  # "positive"
