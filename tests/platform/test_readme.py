"""The platform guide's getting-started section (docs/platform-guide.md, moved there from the README)
runs as written: its key, its server, its Python (with the hosted
model string pointed at the loopback fake server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.platform.test_experiments import behaviour
from tests.platform.test_resume import start

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "platform-guide.md"


def test_readme_platform_section_runs(tmp_path, fake):
    section = GUIDE.read_text().split("## Getting started\n", 1)[1].split("\n## ", 1)[0]
    shell, python = (
        re.findall(r"```bash\n(.*?)```", section, re.S)[0],
        re.findall(r"```python\n(.*?)```", section, re.S)[0],
    )
    assert (
        "assay keys create --project demo > key.txt" in shell and "assay serve --port 8321" in shell
    )
    env = {
        **os.environ,
        "ASSAY_HOME": str(tmp_path / "home"),
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
    }
    created = subprocess.run(
        [sys.executable, "-m", "assay", "keys", "create", "--project", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert created.returncode == 0, created.stderr
    (tmp_path / "key.txt").write_text(created.stdout)
    fake.default = behaviour()
    server, base = start(f"sqlite:///{tmp_path / 'home' / 'assay.sqlite'}", env)
    try:
        code = python.replace('"openai/gpt-4o-mini"', repr(fake.model_string("gen")))
        code = code.replace(
            "judge_model=" + repr(fake.model_string("gen")),
            "judge_model=" + repr(fake.model_string("judge")),
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, "ASSAY_BASE_URL": base},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert "'n': 1" in done.stdout and "'coverage': 1.0" in done.stdout
    finally:
        server.terminate()
        server.wait(30)
