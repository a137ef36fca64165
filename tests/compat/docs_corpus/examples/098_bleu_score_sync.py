# ruff: noqa
# Docs: Traditional NLP Metrics > BLEU Score > Synchronous Usage
# Changes:
#   - ragas -> assay in imports
#   - filled in: the import and `scorer = BleuScore()` of the page's previous cell
# corpus: expect-eval result.value 0.7071067811865478
from assay.metrics.collections import BleuScore  # filled in: previous cell

scorer = BleuScore()  # filled in: previous cell

result = scorer.score(
    reference="The Eiffel Tower is located in Paris.",
    response="The Eiffel Tower is located in India.",
)
