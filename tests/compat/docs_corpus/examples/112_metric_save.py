# ruff: noqa
# Docs: API Reference > Metrics > SimpleLLMMetric.save (Examples)
# Changes:
#   - ragas -> assay in imports
#   - filled in: `metric`, a DiscreteMetric named "response_quality" (the doctest assumes one)
#   - omitted: the line saving to the placeholder directory "/path/to/metrics/"
#   - the doctest prompts (>>>) removed
# corpus: expect-eval sorted(__import__("os").listdir(".")) ['compressed.json.gz', 'custom.json', 'no_extension.json', 'response_quality.json']
from assay.metrics import DiscreteMetric  # filled in

metric = DiscreteMetric(  # filled in
    name="response_quality",
    prompt="Is the response good? {response}. Return 'pass' or 'fail'.",
    allowed_values=["pass", "fail"],
)

metric.save()  # → ./response_quality.json
metric.save("custom.json")  # → ./custom.json
metric.save("no_extension")  # → ./no_extension.json
metric.save("compressed.json.gz")  # → ./compressed.json.gz (compressed)
