# ruff: noqa
# Docs: Multimodal Relevance > Example (Recommended - Collections API)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the image file at the docs' placeholder path (a 2x2 JPEG written there)
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
import os  # filled in: the image file the docs point at (a placeholder path left to the reader)
from PIL import Image  # filled in

os.makedirs(os.path.dirname("path/to/tesla_image.jpg"), exist_ok=True)  # filled in
Image.new("RGB", (2, 2), "white").save(
    "path/to/tesla_image.jpg"
)  # filled in: a 2x2 JPEG at that path

from openai import AsyncOpenAI
from assay.llms.base import llm_factory
from assay.metrics.collections import MultiModalRelevance

# Setup - use a vision-capable model
client = AsyncOpenAI()
llm = llm_factory("gpt-4o", client=client)  # Vision-capable model required

# Create metric instance
metric = MultiModalRelevance(llm=llm)

# Evaluate relevance
result = await metric.ascore(
    user_input="What about the Tesla Model X?",
    response="The Tesla Model X is an electric SUV.",
    retrieved_contexts=[
        "path/to/tesla_image.jpg",  # Image context
        "Tesla manufactures electric vehicles.",  # Text context
    ],
)
print(f"Relevance Score: {result.value}")  # 1.0 (relevant) or 0.0 (not relevant)
