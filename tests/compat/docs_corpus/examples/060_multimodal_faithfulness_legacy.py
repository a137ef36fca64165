# ruff: noqa
# Docs: Multimodal Faithfulness > Example (Legacy API - Deprecated)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the image file at the docs' placeholder path (a 2x2 JPEG written there)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
import os  # filled in: the image file the docs point at (a placeholder path left to the reader)
from PIL import Image  # filled in

os.makedirs(os.path.dirname("custom_eval/multimodal/images/tesla.jpg"), exist_ok=True)  # filled in
Image.new("RGB", (2, 2), "white").save(
    "custom_eval/multimodal/images/tesla.jpg"
)  # filled in: a 2x2 JPEG at that path

from assay.dataset_schema import SingleTurnSample
from assay.metrics import MultiModalFaithfulness

sample = SingleTurnSample(
    user_input="What about the Tesla Model X?",
    response="Cats are cute.",
    retrieved_contexts=["custom_eval/multimodal/images/tesla.jpg"],
)
scorer = MultiModalFaithfulness()
await scorer.single_turn_ascore(sample)
