"""`assay trajectories` (#43 §2): an export of traces becomes rows `assay evaluate` reads, one
conversation per trace or per session; a bad --by or an --output that is the export is one line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay import EvaluationDataset, ToolCall, ToolCallAccuracy, evaluate
from assay.cli.app import app
from tests.integrations.test_trajectory import span, trace

CALL = {"id": "c", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}


def _export(path):
    sent = [
        {"role": "user", "content": "Find x"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c", "content": "x found"},
    ]
    first = trace(
        span("a", "llm", input=sent, output="Found."), ident="t1", metadata={"session_id": "s"}
    )
    second = trace(
        span("b", "llm", input="And y?", output="No y."),
        ident="t2",
        metadata={"session_id": "s"},
        created=1,
    )
    path.write_text("".join(json.dumps(t) + "\n" for t in (first, second)), encoding="utf-8")


def test_an_export_becomes_rows_for_evaluate(tmp_path):
    export, rows = tmp_path / "traces.jsonl", tmp_path / "rows.jsonl"
    _export(export)
    done = CliRunner().invoke(app, ["trajectories", str(export), "-o", str(rows)])
    assert done.exit_code == 0, done.output
    assert f"2 conversations (1 tool calls) written to {rows}" in " ".join(done.output.split())
    by_session = CliRunner().invoke(
        app, ["trajectories", str(export), "-o", str(rows), "--by", "session"]
    )
    assert by_session.exit_code == 0 and "1 conversations" in by_session.output
    [conversation] = EvaluationDataset.load(rows)
    assert [m.content for m in conversation.user_input][-2:] == ["And y?", "No y."]
    conversation.reference_tool_calls = [ToolCall(name="search", args={"q": "x"})]
    scored = evaluate([conversation], metrics=[ToolCallAccuracy()], show_progress=False)
    assert scored["tool_call_accuracy"] == [1.0]


def test_mistakes_are_refused(tmp_path):
    export = tmp_path / "traces.jsonl"
    _export(export)
    bad_by = CliRunner().invoke(app, ["trajectories", str(export), "-o", "x.jsonl", "--by", "turn"])
    assert bad_by.exit_code != 0 and "--by must be 'trace' or 'session'" in str(bad_by.exception)
    itself = CliRunner().invoke(app, ["trajectories", str(export), "-o", str(export)])
    assert itself.exit_code != 0 and "is the export itself" in str(itself.exception)
    assert export.read_text(encoding="utf-8").count("\n") == 2  # untouched
