"""`assay prompts adapt`: translate a metric's prompts with the judge and save them as files."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import assay.models.factory as factory
from assay.cli.app import app
from tests.prompts.test_localize import translator


def test_adapt_writes_one_file_per_prompt(tmp_path, monkeypatch):
    llm, _ = translator()
    monkeypatch.setattr(factory, "llm_factory", lambda *args, **kwargs: llm)
    default = CliRunner().invoke(
        app,
        [
            "prompts",
            "adapt",
            "--metric",
            "faithfulness",
            "--language",
            "german",
            "--llm",
            "scripted",
            "--output",
            str(tmp_path / "default"),
        ],
    )
    assert default.exit_code == 0, default.output
    # sentence statements (the default) send only the verdict prompt, so only it is adapted
    assert [p.name for p in (tmp_path / "default").iterdir()] == [
        "faithfulness_supported_german.json"
    ]
    done = CliRunner().invoke(
        app,
        [
            "prompts",
            "adapt",
            "--metric",
            "faithfulness(statements=claims)",
            "--language",
            "german",
            "--llm",
            "scripted",
            "--output",
            str(tmp_path),
        ],
    )
    assert done.exit_code == 0, done.output
    files = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert files == ["faithfulness_claims_german.json", "faithfulness_supported_german.json"]
    saved = json.loads((tmp_path / "faithfulness_claims_german.json").read_text())
    assert "[de] " in json.dumps(saved, ensure_ascii=False)
    # Running again without --overwrite refuses to replace the files.
    again = CliRunner().invoke(
        app,
        [
            "prompts",
            "adapt",
            "--metric",
            "faithfulness(statements=claims)",
            "--language",
            "german",
            "--llm",
            "scripted",
            "--output",
            str(tmp_path),
        ],
    )
    assert again.exit_code != 0
