# ruff: noqa
# Docs: Traditional NLP Metrics > Non LLM String Similarity > Example with Different Distance Measure
# Changes:
#   - ragas -> assay in imports
from assay.metrics._string import NonLLMStringSimilarity, DistanceMeasure

scorer = NonLLMStringSimilarity(distance_measure=DistanceMeasure.HAMMING)
