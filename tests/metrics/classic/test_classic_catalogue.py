"""The classic metrics are exported, registered under their Ragas ids, and run in evaluate()."""

from __future__ import annotations

import json

import assay
from assay import (
    AIMessage,
    EvaluationDataset,
    HumanMessage,
    MultiTurnSample,
    SingleTurnSample,
    ToolCall,
)
from assay.metrics import classic
from assay.metrics.registry import create_metric, metric_classes

IDS = {
    "bleu_score": classic.BleuScore,
    "chrf_score": classic.CHRFScore,
    "data_compare_score": classic.DataCompyScore,
    "exact_match": classic.ExactMatch,
    "id_based_context_precision": classic.IDBasedContextPrecision,
    "id_based_context_recall": classic.IDBasedContextRecall,
    "non_llm_context_precision_with_reference": classic.NonLLMContextPrecisionWithReference,
    "non_llm_context_recall": classic.NonLLMContextRecall,
    "non_llm_string_similarity": classic.NonLLMStringSimilarity,
    "rouge_score": classic.RougeScore,
    "string_present": classic.StringPresence,
    "tool_call_accuracy": classic.ToolCallAccuracy,
    "tool_call_f1": classic.ToolCallF1,
}


def test_every_classic_name_is_exported_from_assay():
    for name in classic.__all__:
        assert getattr(assay, name) is getattr(classic, name)


def test_metric_ids_are_registered():
    catalogue = metric_classes()
    for metric_id, cls in IDS.items():
        assert catalogue[metric_id] is cls
        assert cls().name == metric_id


def test_create_metric_passes_parameters():
    metric = create_metric("rouge_score", rouge_type="rouge1", mode="recall")
    assert (metric.rouge_type, metric.mode) == ("rouge1", "recall")
    assert (
        create_metric(
            "non_llm_string_similarity", distance_measure="hamming"
        ).distance_measure.value
        == "hamming"
    )


def test_single_turn_metrics_run_in_evaluate_with_a_checkpoint(tmp_path):
    dataset = EvaluationDataset(
        samples=[
            SingleTurnSample(
                response="The Eiffel Tower is located in India.",
                reference="The Eiffel Tower is located in Paris.",
                retrieved_contexts=["The Eiffel Tower is located in Paris."],
                reference_contexts=[
                    "The Eiffel Tower is one of the most famous landmarks in Paris."
                ],
                retrieved_context_ids=["doc_1", "doc_2"],
                reference_context_ids=["doc_1"],
            )
        ]
    )
    metrics = [
        cls()
        for cls in IDS.values()
        if cls.sample_kind == "single_turn" and cls is not classic.DataCompyScore
    ]
    result = assay.evaluate(dataset, metrics, run_dir=tmp_path / "run", show_progress=False)
    assert result.errors() == []
    assert result["bleu_score"] == [0.7071067811865478]
    assert result["id_based_context_precision"] == [0.5]
    assert result["non_llm_context_precision_with_reference"] == [0.9999999999]
    # Every outcome, details included, survives the JSON round trip of the checkpoint.
    lines = (tmp_path / "run" / "cells.jsonl").read_text().splitlines()
    assert len(lines) == len(metrics)
    for line in lines:
        assert json.loads(line)["outcome"]["status"] == "ok"


def test_data_compare_runs_in_evaluate_and_malformed_csv_is_an_error_cell(tmp_path):
    table = "id,v\n1,a\n2,b\n"
    dataset = EvaluationDataset(
        samples=[
            SingleTurnSample(response=table, reference="id,v\n1,a\n2,c\n"),
            SingleTurnSample(response="a,b\n1,2\n1,2,3,4\n", reference=table),
        ]
    )
    result = assay.evaluate(
        dataset, [classic.DataCompyScore()], run_dir=tmp_path / "run", show_progress=False
    )
    assert result["data_compare_score"] == [0.5, None]
    [(row, name, error)] = result.errors()
    assert (row, name, error.error_type) == (1, "data_compare_score", "DataError")
    assert "response" in error.message
    for line in (tmp_path / "run" / "cells.jsonl").read_text().splitlines():
        json.loads(line)


def test_multi_turn_metrics_run_in_evaluate():
    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="Weather in Paris?"),
            AIMessage(
                content="", tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})]
            ),
        ],
        reference_tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})],
    )
    result = assay.evaluate(
        EvaluationDataset(samples=[sample]),
        [classic.ToolCallAccuracy(), classic.ToolCallF1()],
        show_progress=False,
    )
    assert result["tool_call_accuracy"] == [1.0]
    assert result["tool_call_f1"] == [1.0]
