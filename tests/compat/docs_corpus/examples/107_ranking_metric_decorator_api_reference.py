# ruff: noqa
# Docs: API Reference > Metrics > ranking_metric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
#   - the asserted value is what the docs' own function returns for this input
# corpus: docs-bug AttributeError: has no attribute 'value' -- calling a decorated metric returns the function's raw value in Ragas too, so result.value fails there as well
from assay.metrics import ranking_metric


@ranking_metric(name="priority_ranker", allowed_values=3)
def rank_by_urgency(user_input: str, responses: list) -> list:
    """Rank responses by urgency keywords."""
    urgency_keywords = ["urgent", "asap", "critical"]
    scored = []
    for resp in responses:
        score = sum(kw in resp.lower() for kw in urgency_keywords)
        scored.append((score, resp))
    # Sort by score descending and return top items
    ranked = sorted(scored, key=lambda x: x[0], reverse=True)
    return [item[1] for item in ranked[:3]]


result = rank_by_urgency(
    user_input="What should I do first?",
    responses=["This is urgent", "Take your time", "Critical issue!"],
)
print(result.value)  # Ranked list of responses
