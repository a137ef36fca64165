"""`assay testset generate`: a folder of files to a JSONL test set and its report, with one-line
errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.testset.corpus import FOUNDRY, GARDEN, KETTLES


def assay(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=120
    )


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "kettle.md").write_text(KETTLES, encoding="utf-8")
    (folder / "foundry.rst.txt").write_text(FOUNDRY, encoding="utf-8")
    (folder / "sub" / "garden.markdown").write_text(GARDEN, encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG not text")
    return folder


def test_generate_writes_the_testset_and_its_report(fake, tmp_path) -> None:
    out = tmp_path / "testset.jsonl"
    done = assay(
        "testset",
        "generate",
        str(_docs(tmp_path)),
        "--size",
        "4",
        "-o",
        str(out),
        "--llm",
        fake.server.model_string("writer"),
        "--embeddings",
        f"vllm/bow@{fake.server.url}",
        "--no-cache",
        "--style",
        "web_search_like",
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4
    assert {row["query_style"] for row in rows} == {"Web search like queries"}
    report = json.loads((tmp_path / "testset.report.json").read_text(encoding="utf-8"))
    assert report["produced"] == 4 and report["documents"] == 3
    assert "4 of 4 samples written to" in done.stdout
    assert "samples" in done.stderr  # the progress bars, one per stage
    assert "HeadingSplitter" in done.stderr


def test_an_empty_folder_is_a_one_line_error(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    done = assay(
        "testset",
        "generate",
        str(tmp_path / "empty"),
        "--size",
        "2",
        "--llm",
        "vllm/x@http://127.0.0.1:9/v1",
    )
    assert done.returncode == 2
    assert (
        "error:" in done.stderr
        and "no .md, .markdown, .txt, .rst, .text files found" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_blank_files_only_is_refused_before_any_model_call(tmp_path, fake) -> None:
    from typer.testing import CliRunner

    from assay.cli.app import app
    from assay.errors import UsageError

    folder = tmp_path / "blank"
    folder.mkdir()
    (folder / "a.md").write_text("   \n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "testset", "generate", str(folder), "--size", "2", "-o", str(tmp_path / "t.jsonl"),
            "--llm", fake.server.model_string("writer"), "--embeddings", f"vllm/bow@{fake.server.url}",
            "-q",
        ],
    )  # fmt: skip
    assert isinstance(result.exception, UsageError)
    assert "no documents with text: got 1 documents, 1 of them empty" in str(result.exception)
    assert not (tmp_path / "t.jsonl").exists() and fake.chat_count == 0


def test_load_documents_reads_in_sorted_order_and_names_a_file_that_is_not_utf8(tmp_path) -> None:
    import pytest

    from assay.errors import DataError
    from assay.testset import load_documents

    folder = _docs(tmp_path)
    assert [m["source"] for _, m in load_documents(folder)] == [
        "foundry.rst.txt",
        "kettle.md",
        "sub/garden.markdown",
    ]
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1\.txt: not UTF-8 text \(byte 3\)"):
        load_documents(folder)
