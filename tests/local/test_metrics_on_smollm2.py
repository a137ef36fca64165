"""Two judged metrics end to end on the real local path (SmolLM2): plumbing only, no quality."""

from __future__ import annotations

from assay import evaluate
from assay.metrics.rag.context_precision import ContextPrecision
from assay.metrics.rag.faithfulness import Faithfulness
from tests.local.conftest import make_llm, needs_smollm2

ROWS = [
    {
        "user_input": "Where is the Eiffel Tower?",
        "response": "The Eiffel Tower is in Paris. It was finished in 1889.",
        "reference": "The Eiffel Tower is in Paris, France.",
        "retrieved_contexts": [
            "The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889.",
            "Berlin is the capital of Germany.",
        ],
    }
]


@needs_smollm2
def test_faithfulness_and_context_precision_run_on_the_local_judge():
    llm = make_llm(max_tokens=200)
    result = evaluate(ROWS, [Faithfulness(llm=llm), ContextPrecision(llm=llm)], show_progress=False)
    for metric in ("faithfulness", "context_precision"):
        cell = result.outcome(0, metric)
        # A 135M model may fail to follow the format; what matters is a typed outcome, never a NaN.
        assert cell.status in ("ok", "skipped", "error")
        if cell.status == "ok":
            assert 0.0 <= cell.value <= 1.0
        if cell.status == "error":
            assert cell.error_type in ("OutputParseError", "OutputTruncated")
    assert result.usage().requests >= 1
    assert result.usage().cost == 0.0
