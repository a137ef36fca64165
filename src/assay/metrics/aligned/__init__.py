"""The aligned state of a judge: what scoring needs after `metric.align(...)`.

Alignment fits three things on human labels, all of them data the metric carries:

- a pool of worked examples, each already in the shape of one of the metric's prompts (the
  inputs that prompt reads and the answer the reviewer's label implies), with an embedding of the
  row it came from. At scoring time the `k` examples nearest to the row being scored are put into
  the prompt as earlier turns, taken in turn from each label so every label is shown (`balance`);
  `selection="fixed"` picks the examples once, so every row gets the same prompt (cheaper on a
  local judge, whose server reuses a shared prompt prefix);
- optionally a rewritten instruction per prompt (from an optimizer);
- for judges whose value is a score, a decision threshold; the value is left as it is (so
  ranking and calibration statistics stay meaningful) and `details["alignment"]` says which side
  of the threshold it fell on.

This module holds only the mechanics scoring needs. How examples are chosen from labels, how the
threshold is calibrated, the optimizers and the report are `assay.alignment`, a surface above the
metrics layer; `Alignable` reaches it through an `aligner` argument (see `_aligner`).
The state is saved with the prompt ids, versions and content hashes it was fitted on; loading it
into a metric whose prompt has changed is refused.
"""

from assay.metrics.aligned.mixin import Alignable
from assay.metrics.aligned.state import (
    STATE_FORMAT,
    TEMPLATE,
    AlignedExample,
    AlignedState,
    as_binary,
    cosine,
    decision_score,
    embed,
    excluding,
    nearest_examples,
    prompt_fingerprints,
    query_text,
    template_hash,
)

__all__ = [
    "STATE_FORMAT",
    "TEMPLATE",
    "Alignable",
    "AlignedExample",
    "AlignedState",
    "as_binary",
    "cosine",
    "decision_score",
    "embed",
    "excluding",
    "nearest_examples",
    "prompt_fingerprints",
    "query_text",
    "template_hash",
]
