# ruff: noqa
# Docs: Overview of Metrics > Output Types > 3. Ranking Metrics
# Changes:
#   - ragas -> assay in imports
# corpus: differs MetricError: not a ranking of -- a decorated metric returning a value outside allowed_values is a typed error in assay; Ragas returns value=None
from assay.metrics import ranking_metric


@ranking_metric(name="response_ranking", allowed_values=[0, 1])
def my_metric(responses: list) -> list:
    response_lengths = [len(response) for response in responses]
    sorted_indices = sorted(range(len(response_lengths)), key=lambda i: response_lengths[i])
    return sorted_indices


my_metric.score(
    responses=["short", "a bit longer", "the longest response"]
)  # Returns a ranked list of indices
