"""The batch tests' judge and rows: a faithfulness run whose claim split and verdicts depend on
the row, so a run takes two waves and every row scores its own value.

Row i's response splits into i + 1 claims ("claim i.j"); claim j is supported when j is even, so
row i scores (i // 2 + 1) / (i + 1): 1, 1/2, 2/3, 1/2.
"""

from __future__ import annotations

from typing import Any

from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import llm_factory
from assay.models.llm import LLM
from tests.metrics.loopback import FAST_RETRY, Judge, by_input, claims, fenced, verdict_lines
from tests.models.fake_openai import RecordedRequest

N_ROWS = 4
EXPECTED = [1.0, 1 / 2, 2 / 3, 1 / 2]


def response(i: int) -> str:
    return f"Response number {i}."


def rows(n: int = N_ROWS) -> list[dict[str, Any]]:
    return [
        {
            "user_input": f"Question {i}?",
            "response": response(i),
            "retrieved_contexts": [f"Every claim of row {i} is here."],
        }
        for i in range(n)
    ]


def _verdicts(request: RecordedRequest) -> str:
    items = fenced(request, "items").splitlines()
    return verdict_lines(
        *("yes" if int(item.rsplit(".", 1)[1]) % 2 == 0 else "no" for item in items)
    )


def judge(n: int = N_ROWS) -> Judge:
    splits = {response(i): claims(*(f"claim {i}.{j}" for j in range(i + 1))) for i in range(n)}
    return Judge({"claims": by_input("text", splits), "supported": _verdicts})


def openai_judge(url: str, **options: Any) -> LLM:
    return llm_factory(
        "openai/gpt-4o-mini",
        base_url=url,
        api_key="test-key",
        cache=False,
        retry=FAST_RETRY,
        **options,
    )


def anthropic_judge(root: str) -> LLM:
    return llm_factory(
        "anthropic/claude-haiku-4", base_url=root, api_key="test-key", cache=False, retry=FAST_RETRY
    )


def faithfulness(llm: LLM) -> Faithfulness:
    return Faithfulness(llm=llm, statements="claims", statements_per_call=None)
