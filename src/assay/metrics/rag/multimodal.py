"""Multimodal faithfulness and relevance: one yes/no judgement by a vision-capable judge.

Contexts may be text, http(s) image URLs, local image files (jpg, png, gif, webp, bmp) or base64
data URIs; images are sent as image parts of the chat message, local files inlined as data URIs.
"""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from assay.errors import NotApplicable, UsageError
from assay.metrics.base import CallEstimate
from assay.metrics.judge import ask_yes_no
from assay.metrics.llm_metric import LLMMetric
from assay.models.types import ChatMessage
from assay.prompts.render import render
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample

_IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"}


def context_part(context: str) -> dict[str, Any]:
    """One context as a chat content part: text, or an image by URL / data URI / local file."""
    text = context.strip()
    if text.startswith("data:image/") or (
        text.startswith(("http://", "https://"))
        and Path(text.split("?")[0]).suffix.lower() in _IMAGE_SUFFIXES
    ):
        return {"type": "image_url", "image_url": {"url": text}}
    if "\n" not in text and len(text) < 1024 and Path(text).suffix.lower() in _IMAGE_SUFFIXES:
        path = Path(text).expanduser()
        if not path.is_file():
            raise UsageError(f"image context not found: {path}")
        mime = mimetypes.guess_type(path.name)[0] or "image/png"
        encoded = base64.b64encode(path.read_bytes()).decode("ascii")
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
    return {"type": "text", "text": f"<context>\n{text}\n</context>"}


def _with_contexts(messages: list[ChatMessage], contexts: list[str]) -> list[ChatMessage]:
    last = messages[-1]
    parts = [{"type": "text", "text": str(last.content)}, *(context_part(c) for c in contexts)]
    return [*messages[:-1], ChatMessage(role="user", content=parts)]


@dataclass(kw_only=True)
class MultiModalFaithfulness(LLMMetric):
    name: str = "faithful_rate"
    required_fields: ClassVar[tuple[str, ...]] = ("response", "retrieved_contexts")
    default_prompt_ids = ("multimodal_faithfulness",)

    async def _ascore(self, **fields: Any) -> MetricResult:
        contexts = [c for c in fields["retrieved_contexts"] if c and c.strip()]
        if not contexts or not fields["response"].strip():
            raise NotApplicable("the response or the contexts are empty")
        values = {"response": fields["response"], "question": fields.get("user_input", "")}
        messages = _with_contexts(render(self.judge_prompt(self.prompt_ids[0]), values), contexts)
        verdict = await ask_yes_no(self.llm, messages)
        return MetricResult(
            float(verdict.passed),
            reason=f"the judge answered {verdict.label}",
            details={"probability": verdict.probability},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        return CallEstimate(requests=1, input_tokens=1000, output_tokens=2)


@dataclass(kw_only=True)
class MultiModalRelevance(MultiModalFaithfulness):
    name: str = "relevance_rate"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "retrieved_contexts")
    default_prompt_ids = ("multimodal_relevance",)


__all__ = ["MultiModalFaithfulness", "MultiModalRelevance", "context_part"]
