"""The Ragas side of `benchmarks/orchestration.py`, run with the Ragas virtualenv's interpreter.

It imports nothing from assay. It prints one JSON line when ready, then reads one JSON command per
line on stdin (`{"url", "rows", "metrics"}`), scores the rows with Ragas 0.4.3's collection metrics
against the benchmark's loopback server and answers with one JSON line of figures (wall and CPU
seconds, errors, NaNs, rows with a bad cell, error types).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import time
import warnings

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

import ragas  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402 - after the environment the imports read
from ragas.embeddings import embedding_factory  # noqa: E402
from ragas.llms import llm_factory  # noqa: E402
from ragas.metrics.collections import (  # noqa: E402
    AnswerRelevancy,
    ContextPrecision,
    ContextRecall,
    FactualCorrectness,
    Faithfulness,
)

FIELDS = {
    "faithfulness": ("user_input", "response", "retrieved_contexts"),
    "context_precision": ("user_input", "reference", "retrieved_contexts"),
    "context_recall": ("user_input", "retrieved_contexts", "reference"),
    "factual_correctness": ("response", "reference"),
    "answer_relevancy": ("user_input", "response"),
}


def build(url: str) -> dict:
    client = AsyncOpenAI(base_url=url, api_key="EMPTY")
    llm = llm_factory("bench-judge", client=client)
    emb = embedding_factory("openai", model="bench-emb", client=client)
    return {
        "faithfulness": Faithfulness(llm=llm),
        "context_precision": ContextPrecision(llm=llm),
        "context_recall": ContextRecall(llm=llm),
        "factual_correctness": FactualCorrectness(llm=llm),
        "answer_relevancy": AnswerRelevancy(llm=llm, embeddings=emb),
    }


async def run(url: str, rows: list[dict], names: tuple[str, ...]) -> list[dict]:
    metrics = build(url)

    async def row(sample: dict) -> dict:
        # Like @experiment: one task per row, the row's metrics one after another.
        out: dict = {}
        for name in names:
            try:
                result = await metrics[name].ascore(**{f: sample[f] for f in FIELDS[name]})
                value = result.value
                missing = value is None or (isinstance(value, float) and math.isnan(value))
                out[name] = "nan" if missing else value
            except Exception as exc:
                out[name] = "error:" + type(exc).__name__
        return out

    return await asyncio.gather(*(row(sample) for sample in rows))


def figures(results: list[dict], names: tuple[str, ...]) -> dict:
    errors, nans, lost, types = 0, 0, 0, {}
    for out in results:
        bad = False
        for name in names:
            value = out.get(name)
            if isinstance(value, str) and value.startswith("error:"):
                errors, bad = errors + 1, True
                types[value[6:]] = types.get(value[6:], 0) + 1
            elif value == "nan" or value is None:
                nans, bad = nans + 1, True
        lost += bad
    return {"errors": errors, "nan": nans, "rows_with_bad_cells": lost, "error_types": types}


def main() -> None:
    import openai

    ready = {"ready": True, "ragas": ragas.__version__, "openai": openai.__version__}
    print(json.dumps(ready), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        rows, names = command["rows"], tuple(command["metrics"])
        cpu0, wall0 = time.process_time(), time.perf_counter()
        results = asyncio.run(run(command["url"], rows, names))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        answer = {"wall_s": wall, "cpu_s": cpu, **figures(results, names)}
        answer["cells"] = len(rows) * len(names)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
