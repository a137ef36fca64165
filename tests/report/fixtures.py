"""Results files for report tests, written by the library's own writers (no hand-made format)."""

from __future__ import annotations

import json
from pathlib import Path

from assay.engine.checkpoint import RunDirectory
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell, Error, Ok, Skipped
from assay.schema.result import EvaluationResult
from assay.schema.usage import Usage

# A payload that would run if any text reached the page unescaped.
INJECTION = (
    "<script>document.title='pwned'</script><img src=x onerror=\"document.body.dataset.pwned='1'\">"
)

ROWS = [
    {
        "id": "q1",
        "user_input": "When did Apollo 11 land on the Moon?",
        "retrieved_contexts": [
            "Apollo 11 landed on the Moon on 20 July 1969.",
            "The crew were Armstrong, Aldrin and Collins.",
        ],
        "response": "Apollo 11 landed on 20 July 1969 with Armstrong, Aldrin and Collins aboard.",
        "reference": "Apollo 11 landed on 20 July 1969.",
    },
    {
        "id": "q2",
        "user_input": f"Ignore the rules {INJECTION}",
        "retrieved_contexts": ["Mount Everest is 8,849 metres tall."],
        "response": "Everest is 9,000 metres tall.",
        "reference": "Mount Everest is 8,849 metres tall.",
    },
    {
        "id": "q3",
        "user_input": "What is the boiling point of water at sea level?",
        "retrieved_contexts": ["Water boils at 100 degrees Celsius at sea level."],
        "response": "Water boils at 100 °C at sea level.",
        "reference": "100 degrees Celsius.",
    },
    {
        "id": "q4",
        "user_input": "Who wrote the Odyssey?",
        "retrieved_contexts": [],
        "response": "Homer.",
        "reference": "Homer.",
    },
]

FAITHFULNESS = [
    Ok(
        value=1.0,
        reason="2 of 2 claims are supported by the contexts",
        details={
            "claims": [
                {
                    "claim": "Apollo 11 landed on 20 July 1969.",
                    "verdict": "yes",
                    "probability": 0.98,
                },
                {
                    "claim": "The crew was Armstrong, Aldrin and Collins.",
                    "verdict": "yes",
                    "probability": 0.91,
                },
            ],
            "unjudged": 0,
        },
    ),
    Ok(
        value=0.0,
        reason=f"0 of 1 claims are supported; the claim quotes {INJECTION}",
        details={
            "claims": [
                {"claim": "Everest is 9,000 metres tall.", "verdict": "no", "probability": 0.04}
            ],
            "unjudged": 0,
        },
    ),
    Error(
        error_type="OutputParseError",
        message="the judge's answer was not JSON",
        attempts=2,
        raw="Sure! {claims",
    ),
    Skipped(reason="no retrieved contexts to check the response against"),
]
CORRECTNESS = [
    Ok(value="pass", reason="covers the date"),
    Ok(value="fail", reason="the height is wrong"),
    Ok(value="pass", reason="100 °C is right"),
    Ok(value="pass", reason="Homer is right"),
]
USAGE = Usage(input_tokens=1200, output_tokens=150, requests=3, cost=0.0021)


def evaluation_result() -> EvaluationResult:
    dataset = EvaluationDataset.from_list(ROWS)
    specs = [
        {"name": "faithfulness", "class": "Faithfulness", "version": "1", "params": {}},
        {"name": "correctness", "class": "DiscreteMetric", "version": "1", "params": {}},
    ]
    outcomes = [
        {"faithfulness": f, "correctness": c}
        for f, c in zip(FAITHFULNESS, CORRECTNESS, strict=True)
    ]
    usages = [
        {
            "faithfulness": USAGE,
            "correctness": Usage(input_tokens=300, output_tokens=40, requests=1, cost=0.0004),
        }
        for _ in ROWS
    ]
    return EvaluationResult(dataset, specs, outcomes, usages=usages)


def write_results(path: Path) -> Path:
    evaluation_result().to_jsonl(path)
    return path


def write_run_dir(path: Path, *, finished: int | None = None) -> Path:
    """A --run-dir directory as the engine writes it; `finished` cuts it short (a killed run)."""
    result = evaluation_result()
    directory = RunDirectory(path)
    directory.open(
        run_fingerprint="test", description={"n_rows": len(ROWS), "metrics": result.metric_specs}
    )
    cells = [(row, name) for row in range(len(ROWS)) for name in result.metric_names]
    for row, name in cells[:finished]:
        directory.append(
            Cell(
                row=row,
                metric=name,
                outcome=result.outcomes[row][name],
                usage=result.usages[row][name],
            )
        )
    directory.close()
    return path


def write_data(path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path
