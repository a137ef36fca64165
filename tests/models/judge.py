"""A small LLM-judged metric and schema shared by the model-layer tests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.metrics.base import Metric
from assay.schema.outcome import MetricResult
from tests.models.fake_openai import RecordedRequest


class Verdict(BaseModel):
    score: float
    reason: str


def verdict(score: float, reason: str = "fine") -> str:
    return json.dumps({"score": score, "reason": reason})


@dataclass(kw_only=True)
class JudgeMetric(Metric):
    """Asks the judge to rate the response; the score is whatever the judge answers."""

    name: str = "judge"
    required_fields = ("response",)
    needs_llm = True
    llm: Any = None

    async def _ascore(self, *, response: str) -> MetricResult:
        answer = await self.llm.agenerate(
            f"[{self.name}] Rate this response: {response}", schema=Verdict
        )
        return MetricResult(answer.parsed.score, reason=answer.parsed.reason)


def row_of(request: RecordedRequest) -> int:
    """The row number in prompts built from responses like 'row-7'."""
    found = re.search(r"row-(\d+)", request.last_user_text) or re.search(
        r"row-(\d+)", json.dumps(request.messages)
    )
    assert found, f"no row marker in {request.messages!r}"
    return int(found.group(1))


def score_for(row: int) -> float:
    return round(row / 100, 2)


def rows(n: int) -> list[dict[str, str]]:
    return [{"response": f"row-{i}"} for i in range(n)]
